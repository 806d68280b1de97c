import type { RunEventInput } from "@/server/domain/events/catalogue";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { checkMcpServers, type McpHealth, type McpProbeOptions } from "@/server/execution/agents/claude-code/mcp-health";
import type { Grants } from "@/server/execution/agents/claude-code/launch-plan";
import type { AgentSandbox } from "@/server/execution/agents/types";
import { logEvent } from "@/server/observability/log";

// Before a Claude Code attempt launches on a local pool, each of its stack's MCP servers is
// checked as the agent would meet it (mcp-health.ts). Each result is a run event and a log line;
// a required server that fails refuses the launch with its reason; an optional one that fails is
// left out of the agent's --mcp-config, and the launch plan says so. Kubernetes pools are not
// checked (the worker cannot see the pod's network), and the run says that plainly.

export const MCP_HEALTH_TIMEOUT_MS = 10_000;

export type McpPreflight = {
  events: RunEventInput[];
  /** Optional servers that failed, by name, with why: the launch plan leaves them out. */
  leaveOut: Map<string, string>;
  /** Set when a required server failed: the launch is refused with this. */
  refusal: string | null;
};

export async function preflightMcpServers(opts: {
  spec: StackSpec;
  grants: Grants;
  granted: Record<string, string>;
  sandbox: AgentSandbox | null;
  workspaceDir: string | null;
  ids: { runId: string; attemptId: string };
  timeoutMs?: number;
  /** The probe (tests pass the real one with a shorter timeout). */
  check?: (opts: McpProbeOptions) => Promise<McpHealth[]>;
}): Promise<McpPreflight> {
  const { spec } = opts;
  const none: McpPreflight = { events: [], leaveOut: new Map(), refusal: null };
  if (spec.adapter.kind !== "claude-code" || spec.mcpServers.length === 0) return none;
  if (!opts.sandbox || !opts.workspaceDir) {
    return {
      ...none,
      events: [{ type: "log", payload: { stream: "system", text: `MCP servers not health-checked: this pool runs on Kubernetes, whose network the worker cannot see (${spec.mcpServers.map((s) => s.name).join(", ")})` } }],
    };
  }
  const results = await (opts.check ?? checkMcpServers)({
    spec,
    grants: opts.grants,
    granted: opts.granted,
    sandbox: opts.sandbox,
    workspaceDir: opts.workspaceDir,
    timeoutMs: opts.timeoutMs ?? MCP_HEALTH_TIMEOUT_MS,
  });
  const required = new Map(spec.mcpServers.map((s) => [s.name, s.required]));
  const failedRequired = results.filter((r) => !r.ok && required.get(r.server) !== false);
  const leaveOut = new Map(results.filter((r) => !r.ok && required.get(r.server) === false).map((r) => [r.server, r.reason ?? "failed"]));
  const refusal =
    failedRequired.length === 0 ? null : `required MCP server${failedRequired.length === 1 ? "" : "s"} failed ${failedRequired.length === 1 ? "its" : "their"} health check: ${failedRequired.map((r) => `${r.server} (${r.reason ?? "failed"})`).join("; ")}`;
  const events: RunEventInput[] = results.map((r) => {
    const isRequired = required.get(r.server) !== false;
    const outcome = r.ok ? "included" : isRequired ? "refused_launch" : "left_out";
    logEvent(
      "mcp.health",
      opts.ids,
      { server: r.server, transport: r.transport, required: isRequired, ok: r.ok, toolCount: r.toolCount, reason: r.reason, durationMs: r.durationMs, outcome },
      r.ok ? `MCP server ${r.server} answered (${r.toolCount ?? 0} tools)` : `MCP server ${r.server} failed its health check`,
      r.ok ? "info" : "warn",
    );
    return {
      type: "mcp_health",
      payload: { server: r.server, transport: r.transport, required: isRequired, ok: r.ok, toolCount: r.toolCount, reason: r.reason, durationMs: r.durationMs, outcome },
    };
  });
  return { events, leaveOut, refusal };
}
