import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "@/server/domain/events/catalogue";
import { type StackSpec, zStackSpec } from "@/server/domain/stacks/spec";
import type { SandboxNetwork } from "@/server/execution/sandbox/policy";
import { testSandbox } from "@/server/execution/sandbox/testing";
import { runsAnywhere } from "../testing/processes";
import { type DoubleTurn, lastUserText, type MessagesApiDouble, type RecordedRequest, startMessagesApiDouble, systemText } from "../testing/messages-api-double";
import type { AgentExit, SessionEvent } from "../types";
import { createClaudeCodeAdapter, installedClaudeBinary } from "./claude-code-adapter";
import type { ClaudeCodeAdapter } from "./launch-plan";

// The real `claude` binary (node_modules, @anthropic-ai/claude-code) in the real bubblewrap
// sandbox, in a real git worktree, talking to a Messages-API TEST DOUBLE through the sandbox's
// model gateway (the key stays outside the sandbox): the double listens on this machine's own
// address; the tests' pool also lists it, so an agent's own connection could reach it too.

const mcpServer = fileURLToPath(new URL("./fixtures/mcp-env-server.mjs", import.meta.url));
const hostAddress = Object.values(networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;

let root: string;
let workspaceDir: string;
let artifactsDir: string;
let api: MessagesApiDouble | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "airlock-claude-test-"));
  workspaceDir = join(root, "workspace");
  artifactsDir = join(root, "artifacts");
  await mkdir(workspaceDir);
  await writeFile(join(workspaceDir, "sum.js"), "export const sum = (a, b) => a - b;\n");
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: workspaceDir });
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init", "--allow-empty"], { cwd: workspaceDir });
});

afterEach(async () => {
  await api?.close();
  api = undefined;
  await rm(root, { recursive: true, force: true });
});

function stackOf(over: Record<string, unknown> = {}): { spec: StackSpec; adapter: ClaudeCodeAdapter } {
  const spec = zStackSpec.parse({
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "claude-code", baseUrlConfigMap: "anthropic-base-url", maxTurns: 8 },
    tools: ["Read", "Edit", "Bash(git status:*)", "mcp__ci__report_env"],
    mcpServers: [{ name: "ci", transport: "stdio", target: `${process.execPath} ${mcpServer}`, secrets: ["ci-token", "sentry-auth-token"] }],
    subagents: [{ name: "test-fixer", role: "Fixes exactly one failing test", tools: ["Read"] }],
    promptTemplate: "Fix it",
    limits: { wallClockMinutes: 2, maxCostUsd: 5, maxRetries: 0 },
    ...over,
  });
  return { spec, adapter: spec.adapter as ClaudeCodeAdapter };
}

async function run(
  respond: (req: RecordedRequest, i: number) => DoubleTurn,
  over: Record<string, unknown> = {},
  grants = { secrets: ["anthropic-api-key", "ci-token"], configMaps: ["anthropic-base-url"] },
  opts: { onEvent?: (e: SessionEvent, cancel: (reason: string) => void) => void; network?: SandboxNetwork } = {},
) {
  api = await startMessagesApiDouble({ respond, host: hostAddress });
  const { spec, adapter } = stackOf(over);
  const session = await createClaudeCodeAdapter({ spec, adapter, grants: { secrets: new Set(grants.secrets), configMaps: new Set(grants.configMaps) }, killGraceMs: 1000 }).start({
    prompt: "The check `test` fails: sum(1, 2) is -1. Fix sum.js.",
    contextBundle: { failure: "sum(1, 2) expected 3, got -1" },
    workspaceDir,
    artifactsDir,
    // SENTRY_AUTH_TOKEN is on the server but not granted to this stack: it must reach nothing.
    env: { ANTHROPIC_API_KEY: "sk-ant-double-key", ANTHROPIC_BASE_URL: api.url, CI_TOKEN: "ci-token-value", SENTRY_AUTH_TOKEN: "sentry-value-not-granted" },
    limits: { wallClockMs: 90_000 },
    sandbox: testSandbox({ network: opts.network ?? { mode: "restricted", allowedHosts: [`${hostAddress}:${api.port}`] } }),
  });
  const events: AgentEvent[] = [];
  const all: SessionEvent[] = [];
  for await (const e of session.events) {
    opts.onEvent?.(e, (reason) => session.cancel(reason));
    all.push(e);
    if (e.type !== "sandbox") events.push(e);
  }
  const exit: AgentExit = await session.exit;
  const main = api.requests.filter((r) => (r.body.tools ?? []).length > 0);
  return { events, all, exit, requests: api.requests, main };
}

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name).sort();
const systemLogs = (events: AgentEvent[]) => events.flatMap((e) => (e.type === "log" && e.payload.stream === "system" ? [e.payload.text] : []));

describe.skipIf(!hostAddress || !existsSync(installedClaudeBinary()))("claude-code adapter: the real CLI in the sandbox against a Messages-API double", () => {
  it("offers the model only the stack's tools and subagent, edits the workspace, and reports the stream as events", async () => {
    const { events, exit, main } = await run((req) => {
      const last = lastUserText(req);
      if (!(req.body.tools ?? []).length) return { blocks: [{ type: "text", text: "title" }] };
      if (last.includes("Fix sum.js")) return { blocks: [{ type: "thinking", thinking: "The sign is wrong." }, { type: "tool_use", name: "Read", input: { file_path: join(workspaceDir, "sum.js") } }] };
      if (last.includes("a - b")) return { blocks: [{ type: "tool_use", name: "Edit", input: { file_path: join(workspaceDir, "sum.js"), old_string: "a - b", new_string: "a + b" } }] };
      if (last.includes("has been updated") || last.includes("updated successfully")) return { blocks: [{ type: "tool_use", name: "mcp__ci__report_env", input: { names: ["CI_TOKEN", "SENTRY_AUTH_TOKEN", "ANTHROPIC_API_KEY"] } }] };
      if (last.includes("CI_TOKEN=")) return { blocks: [{ type: "text", text: `Fixed the sign. ${last}` }], usage: { input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 100 } };
      return { blocks: [{ type: "text", text: `unexpected: ${last.slice(0, 200)}` }] };
    });
    expect(exit.status, JSON.stringify(events.slice(-5))).toBe("succeeded");
    expect(await readFile(join(workspaceDir, "sum.js"), "utf8")).toBe("export const sum = (a, b) => a + b;\n");

    // The CLI got the stack: model, only the listed built-ins plus the subagent tool, the MCP tool.
    expect(main.length).toBeGreaterThanOrEqual(4);
    for (const r of main) expect(r.body.model).toBe("claude-sonnet-4-5");
    expect(toolNames(main[0]!)).toEqual(["Agent", "Bash", "Edit", "Read", "mcp__ci__report_env"].sort());
    // Subagent types reach the model in the conversation's system reminders.
    expect(JSON.stringify(main[0]!.body.messages)).toContain("test-fixer: Fixes exactly one failing test");
    expect(systemText(main[0]!)).toContain("context.json");
    expect(main[0]!.headers["x-api-key"]).toBe("sk-ant-double-key");

    // The granted secret reached the MCP server; the ungranted one and the API key did not.
    const mcpResult = events.find((e) => e.type === "tool_result" && e.payload.output.includes("CI_TOKEN="));
    expect(mcpResult?.type === "tool_result" && mcpResult.payload.output).toMatch(/CI_TOKEN=present\(14\) SENTRY_AUTH_TOKEN=absent ANTHROPIC_API_KEY=absent/);

    const types = events.map((e) => e.type);
    expect(types).toContain("tool_call");
    expect(types).toContain("tool_result");
    expect(events.some((e) => e.type === "thinking" && e.payload.text === "The sign is wrong.")).toBe(true);
    expect(exit.externalSessionId).toMatch(/^[0-9a-f-]{36}$/);
    // The command line and generated files open the transcript, secrets by name only.
    const plan = systemLogs(events).find((t) => t.startsWith("Claude Code command line"))!;
    expect(plan).toContain("--permission-mode=dontAsk");
    expect(plan).toContain("CI_TOKEN (secret ci-token)");
    expect(plan).toContain("Withheld: secret sentry-auth-token for MCP server ci: not granted");
    expect(plan).not.toContain("ci-token-value");
    // The run's totals are the CLI's own.
    const cost = events.findLast((e) => e.type === "cost");
    expect(cost?.type === "cost" && cost.payload.usd).toBeGreaterThan(0);
  }, 120_000);

  it("hostile: the model API key never enters the sandbox; the CLI reaches the model through the gateway even with no network", async () => {
    // What a prompt-injected agent would try: every process's environment, and its own.
    const probe = "grep -l -a sk-ant-double-key /proc/[0-9]*/environ 2>/dev/null | wc -l; for f in /proc/[0-9]*/environ; do cat \"$f\" >/dev/null 2>&1 && echo \"$f\"; done | wc -l; env | grep -c '^ANTHROPIC_API_KEY=' || true";
    const { events, exit, main } = await run(
      (req) => {
        const last = lastUserText(req);
        if (!(req.body.tools ?? []).length) return { blocks: [{ type: "text", text: "title" }] };
        if (last.includes("Fix sum.js")) return { blocks: [{ type: "tool_use", name: "Bash", input: { command: probe } }] };
        return { blocks: [{ type: "text", text: "done" }] };
      },
      { tools: ["Bash"], mcpServers: [], subagents: [] },
      undefined,
      { network: { mode: "none", allowedHosts: [] } },
    );
    expect(exit.status, exit.reason ?? "").toBe("succeeded");
    // The double saw the real key: the gateway added it outside.
    for (const r of main) expect(r.headers["x-api-key"]).toBe("sk-ant-double-key");
    const result = events.find((e) => e.type === "tool_result");
    const lines = (result?.type === "tool_result" ? result.payload.output : "").trim().split("\n");
    // No process inside holds the key (of the environments the agent could read: at least its
    // own), and the agent's shell does not even get the placeholder (the CLI scrubs its own
    // credentials from its commands).
    expect(lines[0]).toBe("0");
    expect(Number(lines[1])).toBeGreaterThanOrEqual(1);
    expect(lines[2]).toBe("0");
  }, 120_000);

  it("a tool call outside the allow rules is denied, not run, and shown as a permission denial", async () => {
    const { events, exit } = await run((req) => {
      const last = lastUserText(req);
      if (!(req.body.tools ?? []).length) return { blocks: [{ type: "text", text: "title" }] };
      if (last.includes("Fix sum.js")) return { blocks: [{ type: "tool_use", name: "Bash", input: { command: "touch pwned.txt" } }] };
      return { blocks: [{ type: "text", text: "gave up" }] };
    });
    expect(existsSync(join(workspaceDir, "pwned.txt"))).toBe(false);
    const denial = events.find((e) => e.type === "permission_denied");
    expect(denial?.type === "permission_denied" && denial.payload.toolName).toBe("Bash");
    expect(exit.status).toBe("succeeded");
  }, 120_000);

  it("an API error ends the session as a failed attempt with the CLI's error shown", async () => {
    const { events, exit } = await run((req) =>
      (req.body.tools ?? []).length ? { error: { status: 400, type: "invalid_request_error", message: "the double refuses this request" } } : { blocks: [{ type: "text", text: "title" }] },
    );
    expect(exit.status).toBe("failed");
    expect(exit.reason).toContain("the double refuses this request");
    expect(systemLogs(events).join("\n")).toContain("the double refuses this request");
  }, 120_000);

  it("max turns from the stack stops the CLI (error_max_turns) and fails the attempt", async () => {
    const { exit, main } = await run(
      (req) => ((req.body.tools ?? []).length ? { blocks: [{ type: "tool_use", name: "Read", input: { file_path: join(workspaceDir, "sum.js") } }] } : { blocks: [{ type: "text", text: "title" }] }),
      { adapter: { kind: "claude-code", baseUrlConfigMap: "anthropic-base-url", maxTurns: 2 } },
    );
    expect(exit.status).toBe("failed");
    expect(exit.reason).toContain("error_max_turns");
    expect(main.length).toBeLessThanOrEqual(3);
  }, 120_000);

  it("refuses to start without the model API key, naming the variable to set", async () => {
    await expect(run(() => ({ blocks: [] }), {}, { secrets: ["ci-token"], configMaps: ["anthropic-base-url"] })).rejects.toThrow(
      /grant the secret anthropic-api-key to this stack and set AIRLOCK_SECRET_ANTHROPIC_API_KEY/,
    );
    expect(api?.requests).toEqual([]);
  });

  it("gives the agent exactly the stack's skills, copied from the repository", async () => {
    const skill = (name: string, text: string) =>
      mkdir(join(workspaceDir, ".claude", "skills", name), { recursive: true }).then(() =>
        writeFile(join(workspaceDir, ".claude", "skills", name, "SKILL.md"), `---\nname: ${name}\ndescription: ${text}\n---\n\nSteps for ${name}.\n`),
      );
    await skill("ci-log-reading", "Read CI logs from the bottom up");
    await skill("not-in-the-stack", "A skill the repository has and the stack does not name");
    const { exit, main } = await run((req) => ((req.body.tools ?? []).length ? { blocks: [{ type: "text", text: "ok" }] } : { blocks: [{ type: "text", text: "title" }] }), {
      skills: ["ci-log-reading"],
      tools: ["Read"],
      subagents: [],
      mcpServers: [],
    });
    expect(exit.status).toBe("succeeded");
    const offered = JSON.stringify([main[0]!.body.tools, main[0]!.body.messages, main[0]!.body.system]);
    expect(offered).toContain("Read CI logs from the bottom up");
    expect(offered).not.toContain("A skill the repository has and the stack does not name");
    expect(toolNames(main[0]!)).toEqual(["Read", "Skill"]);
  }, 120_000);

  it("hostile: a skill that is a symbolic link (to the server's own files) is refused before the agent starts", async () => {
    const secretFile = join(root, "server-secret.txt");
    await writeFile(secretFile, "AIRLOCK_SESSION_SECRET=do-not-copy");
    await mkdir(join(workspaceDir, ".claude", "skills", "evil"), { recursive: true });
    await symlink(secretFile, join(workspaceDir, ".claude", "skills", "evil", "SKILL.md"));
    await expect(run(() => ({ blocks: [] }), { skills: ["evil"] })).rejects.toThrow(/skill evil: .* symbolic link/);
    await writeFile(join(root, "SKILL.md"), "a file outside the workspace");
    await symlink(root, join(workspaceDir, ".claude", "skills", "outside"));
    await expect(run(() => ({ blocks: [] }), { skills: ["outside"] })).rejects.toThrow(/skill outside: .* symbolic link/);
    await expect(run(() => ({ blocks: [] }), { skills: ["missing"] })).rejects.toThrow(/skill missing: .claude\/skills\/missing\/SKILL.md is not a file of the repository/);
  }, 60_000);

  it("the stack's cost cap stops the CLI (error_max_budget_usd): a failed attempt with the figures", async () => {
    const { exit, events, main } = await run(
      (req) =>
        (req.body.tools ?? []).length
          ? { blocks: [{ type: "tool_use", name: "Read", input: { file_path: join(workspaceDir, "sum.js") } }], usage: { input_tokens: 1000, output_tokens: 100_000 } }
          : { blocks: [{ type: "text", text: "title" }] },
      { limits: { wallClockMinutes: 2, maxCostUsd: 0.5, maxRetries: 0 } },
    );
    expect(exit.status).toBe("failed");
    expect(exit.reason).toMatch(/^Claude Code ended with error_max_budget_usd after \$\d+\.\d{4}/);
    expect(exit.reason).toContain("Reached maximum budget ($0.5)");
    // Stopped after the turn that passed the cap, not at max turns.
    expect(main.length).toBeLessThan(8);
    const cost = events.findLast((e) => e.type === "cost");
    expect(cost?.type === "cost" && cost.payload.usd).toBeGreaterThan(0.5);
  }, 120_000);

  it("cancel stops the CLI and every process it started (a Bash tool's sleep) in its sandbox", async () => {
    const marker = `airlock-cancel-${randomUUID()}`;
    let cancelled = false;
    const { exit } = await run(
      (req) => ((req.body.tools ?? []).length ? { blocks: [{ type: "tool_use", name: "Bash", input: { command: `sleep 300 # ${marker}` } }] } : { blocks: [{ type: "text", text: "title" }] }),
      { tools: ["Bash"], subagents: [], mcpServers: [] },
      undefined,
      {
        onEvent: (e, cancel) => {
          if (cancelled || e.type !== "tool_call") return;
          cancelled = true;
          void (async () => {
            for (let i = 0; i < 200 && !runsAnywhere(marker); i++) await new Promise((r) => setTimeout(r, 25));
            expect(runsAnywhere(marker)).toBe(true);
            cancel("a maintainer cancelled the run");
          })();
        },
      },
    );
    expect(exit.status).toBe("cancelled");
    expect(exit.reason).toContain("a maintainer cancelled the run");
    expect(runsAnywhere(marker)).toBe(false);
  }, 120_000);
});
