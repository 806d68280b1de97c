import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { installedClaudeBinary } from "@/server/execution/agents/claude-code/claude-code-adapter";
import { closeClaudeCodeRun, runClaudeCodeStack, testHostAddress } from "@/server/queue/testing/claude-code-run";

// MCP health checks before launch, through the worker with the real `claude` in its sandbox and
// a Messages-API TEST DOUBLE for the model: every server is checked (an event each), an optional
// one that fails is left out of what the agent gets (the model is offered none of its tools), and
// a required one that fails refuses the launch with its reason before the CLI starts.

const fixture = (name: string) => fileURLToPath(new URL(`../agents/claude-code/fixtures/mcp-health/${name}.mjs`, import.meta.url));
afterEach(closeClaudeCodeRun);

async function runWithServers(mcpServers: { name: string; target: string; required: boolean }[]) {
  const run = await runClaudeCodeStack({
    respond: () => ({ blocks: [{ type: "text", text: "done" }] }),
    files: { "sum.js": "export const sum = (a, b) => a + b;\n" },
    prompt: "look at sum.js",
    apiKey: "sk-ant-double-mcp-key",
    spec: {
      adapter: { kind: "claude-code", baseUrlConfigMap: "anthropic-base-url", maxTurns: 2 },
      tools: ["Read"],
      mcpServers: mcpServers.map((s) => ({ ...s, transport: "stdio" as const })),
      promptTemplate: "Look",
    },
    settings: { mcpHealthTimeoutMs: 5000 },
  });
  const health = run.events.filter((e) => e.type === "mcp_health").map((e) => e.payload as { server: string; ok: boolean; outcome: string; toolCount?: number; reason?: string; required: boolean });
  return { ...run, health };
}

describe.skipIf(!testHostAddress || !existsSync(installedClaudeBinary()))("MCP health checks before a claude-code launch", () => {
  it("checks every server; an optional one that fails is left out of what the agent is offered", async () => {
    const { after, events, health, requests } = await runWithServers([
      { name: "calc", target: `node ${fixture("healthy")}`, required: true },
      { name: "flaky", target: `node ${fixture("exits")}`, required: false },
    ]);
    expect(after.attempts[0]!.status, after.attempts[0]!.exitReason ?? "").toBe("succeeded");
    expect(health).toEqual([
      expect.objectContaining({ server: "calc", ok: true, toolCount: 2, outcome: "included", required: true }),
      expect.objectContaining({ server: "flaky", ok: false, outcome: "left_out", required: false }),
    ]);
    // The plan the attempt ran with says why flaky is missing; the model saw calc's tools only.
    const plan = events.find((e) => e.type === "log" && JSON.stringify(e.payload).includes("--mcp-config"));
    expect(JSON.stringify(plan?.payload)).toContain("MCP server flaky: left out, its health check failed");
    const offered = requests.flatMap((r) => (r.body.tools ?? []).map((t: { name: string }) => t.name));
    expect(offered).toEqual(expect.arrayContaining(["mcp__calc__add"]));
    expect(offered.some((n: string) => n.startsWith("mcp__flaky__"))).toBe(false);
  }, 120_000);

  it("a required server that fails refuses the launch with its reason; the CLI never starts", async () => {
    const { after, health, requests } = await runWithServers([{ name: "history", target: `node ${fixture("hangs")}`, required: true }]);
    expect(health).toEqual([expect.objectContaining({ server: "history", ok: false, outcome: "refused_launch" })]);
    expect(after.attempts[0]).toMatchObject({ status: "failed" });
    expect(after.attempts[0]!.exitReason).toMatch(/^.*required MCP server failed its health check: history \(/);
    expect(after.status).toBe("failed");
    expect(requests).toHaveLength(0);
  }, 120_000);
});
