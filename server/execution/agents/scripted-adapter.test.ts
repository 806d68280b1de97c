import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { zAgentEvent } from "@/server/domain/events/catalogue";
import type { SessionEvent } from "./types";
import { parseScenario, type Scenario } from "./scenario";
import { builtInScenarioNames, getBuiltInScenario } from "./scenarios";
import { createScriptedAdapter, type ScriptedAdapterConfig } from "./scripted-adapter";
import { type AgentStartOptions, AgentStartError } from "./types";

let root: string;
let workspaceDir: string;
let artifactsDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "airlock-scripted-test-"));
  workspaceDir = join(root, "workspace");
  artifactsDir = join(root, "artifacts");
  await mkdir(workspaceDir);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function start(config: ScriptedAdapterConfig, options: Partial<AgentStartOptions> = {}) {
  return createScriptedAdapter(config).start({
    prompt: "Diagnose",
    contextBundle: {},
    workspaceDir,
    artifactsDir,
    env: {},
    limits: { wallClockMs: 60_000 },
    sandbox: { kind: "none", reason: "scripted demo agent: no process" },
    ...options,
  });
}

async function replay(config: ScriptedAdapterConfig, options: Partial<AgentStartOptions> = {}) {
  const session = await start(config, options);
  const events: SessionEvent[] = [];
  for await (const e of session.events) events.push(e);
  return { session, events, exit: await session.exit };
}

const say = (text: string, delayMs = 0) => ({ delayMs, event: { type: "message", payload: { role: "assistant", text } } });
const tiny = (steps: unknown[], extra: Record<string, unknown> = {}): Scenario =>
  parseScenario({ name: "tiny", title: "Tiny", steps, ...extra });

describe("scripted adapter: the built-in sum-off-by-one scenario", () => {
  it("is listed and valid", () => {
    expect(builtInScenarioNames).toContain("sum-off-by-one");
    expect(getBuiltInScenario("sum-off-by-one")?.steps.length).toBeGreaterThan(20);
    expect(getBuiltInScenario("no-such-scenario")).toBeUndefined();
  });

  it("replays as a labelled scripted demo with a subagent, tool calls, costs and artifacts", async () => {
    const { session, events, exit } = await replay({ scenario: "sum-off-by-one", speed: 1000 });
    expect(session.sessionId).toMatch(/^scripted-[0-9a-f-]{36}$/);
    expect(events[0]).toMatchObject({
      type: "message",
      payload: { role: "system", text: expect.stringContaining("Scripted demo agent") },
    });
    for (const e of events) expect(zAgentEvent.safeParse(e).success).toBe(true);

    const types = events.map((e) => e.type);
    for (const t of ["tool_call", "tool_result", "subagent_started", "subagent_completed", "cost", "heartbeat"]) {
      expect(types).toContain(t);
    }
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e.payload] : []));
    expect(calls.map((c) => c.name)).toEqual(["Bash", "Task", "Grep", "Read", "Edit", "Bash", "Bash"]);
    // Start times are the replay's, not the recording's.
    for (const c of calls) expect(Date.now() - Date.parse(c.startedAt)).toBeLessThan(10_000);
    // Placeholders point at this attempt's workspace.
    const read = events.find((e) => e.type === "tool_call" && e.payload.name === "Read");
    expect(read?.payload).toMatchObject({ input: { file_path: `${workspaceDir}/src/sum.ts` } });
    expect(JSON.stringify(events)).not.toContain("{{workspaceDir}}");
    // The subagent's own tool call is nested under it.
    expect(calls.find((c) => c.name === "Grep")?.subagentId).toBe("toolu_demo_task_01");
    const heartbeat = events.find((e) => e.type === "heartbeat");
    expect(heartbeat?.payload).toEqual({ sessionId: session.sessionId });

    expect(exit).toMatchObject({ status: "succeeded", exitCode: 0 });
    expect(exit.artifacts.map((a) => [a.name, a.kind])).toEqual([
      ["diagnosis.md", "diagnosis"],
      ["fix.patch", "patch"],
    ]);
    const produced = events.flatMap((e) => (e.type === "artifact_produced" ? [e.payload] : []));
    expect(produced.map((p) => p.name)).toEqual(["fix.patch", "diagnosis.md"]);
    for (const p of produced) {
      const bytes = await readFile(join(artifactsDir, p.name));
      expect(p.digest).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
      expect(p.sizeBytes).toBe(bytes.length);
    }
  });

  it("produces a patch that applies to the repository the scenario assumes and fixes sum()", async () => {
    const scenario = getBuiltInScenario("sum-off-by-one");
    const repo = join(root, "repo");
    for (const [path, content] of Object.entries(scenario?.assumes?.files ?? {})) {
      await mkdir(dirname(join(repo, path)), { recursive: true });
      await writeFile(join(repo, path), content);
    }
    await replay({ scenario: "sum-off-by-one", speed: 1000 });
    execFileSync("git", ["init", "-q"], { cwd: repo });
    execFileSync("git", ["apply", "--check", join(artifactsDir, "fix.patch")], { cwd: repo });
    execFileSync("git", ["apply", join(artifactsDir, "fix.patch")], { cwd: repo });
    const fixed = await readFile(join(repo, "src/sum.ts"), "utf8");
    expect(fixed).toContain("for (let i = 0; i < values.length; i++)");
    expect(fixed).not.toContain("values.length - 1");
    // Run the fixed function itself: the failing test's expectation now holds.
    const body = fixed.replace("export function sum(values: number[]): number", "function sum(values)");
    const sum = new Function(`${body}; return sum;`)() as (v: number[]) => number;
    expect(sum([1, 2, 3])).toBe(6);
    expect(sum([])).toBe(0);
  });
});

describe("scripted adapter: timing and stopping", () => {
  const slow = () => tiny([say("one", 100), say("two", 100), say("three", 100)]);

  it("keeps the recorded pacing at speed 1 and divides it by the speed factor", async () => {
    let t0 = Date.now();
    await replay({ scenario: slow(), speed: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    t0 = Date.now();
    await replay({ scenario: slow(), speed: 100 });
    expect(Date.now() - t0).toBeLessThan(200);
  });

  it("honours cancel immediately, mid-delay", async () => {
    const session = await start({ scenario: tiny([say("first"), say("never", 60_000)]) }, {
      onEvent: (e) => e.type === "message" && e.payload.text === "first" && session.cancel("stopped by a maintainer"),
    });
    const t0 = Date.now();
    const events: SessionEvent[] = [];
    for await (const e of session.events) events.push(e);
    const exit = await session.exit;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(exit).toEqual({ status: "cancelled", exitCode: null, reason: "stopped by a maintainer", artifacts: [] });
    expect(events.some((e) => e.type === "message" && e.payload.text === "never")).toBe(false);
  });

  it("times out at the wall-clock limit", async () => {
    const { exit } = await replay({ scenario: tiny([say("slow", 5000)]) }, { limits: { wallClockMs: 50 } });
    expect(exit).toMatchObject({ status: "timed_out", reason: "wall-clock limit of 0.05 s reached" });
  });

  it("cancels through the abort signal", async () => {
    const { exit } = await replay({ scenario: tiny([say("slow", 5000)]) }, { signal: AbortSignal.timeout(30) });
    expect(exit.status).toBe("cancelled");
  });

  it("reports the scenario's own exit, e.g. a failure", async () => {
    const scenario = tiny([say("giving up")], { exit: { status: "failed", exitCode: 1, reason: "could not reproduce" } });
    const { exit } = await replay({ scenario });
    expect(exit).toEqual({ status: "failed", exitCode: 1, reason: "could not reproduce", artifacts: [] });
  });
});

describe("scripted adapter: refusing to start", () => {
  it("rejects an unknown scenario name", async () => {
    await expect(start({ scenario: "missing" })).rejects.toEqual(new AgentStartError('unknown scenario "missing"'));
  });

  it("rejects when already aborted", async () => {
    await expect(start({ scenario: "sum-off-by-one" }, { signal: AbortSignal.abort() })).rejects.toThrow(
      "cancelled before the agent started",
    );
  });
});

describe("scenario validation", () => {
  it("refuses artifact paths outside the artifacts folder and steps that do not exist", () => {
    expect(() => tiny([say("x")], { artifacts: [{ afterStep: 0, name: "../escape.patch", content: "" }] })).toThrow(
      "artifacts.0.name: A relative path inside the artifacts folder",
    );
    expect(() => tiny([say("x")], { artifacts: [{ afterStep: 3, name: "a.md", content: "" }] })).toThrow(
      "artifacts.0.afterStep: No step 3",
    );
  });

  it("refuses artifact_produced steps (artifacts are declared, then digested at replay)", () => {
    const step = { delayMs: 0, event: { type: "artifact_produced", payload: {} } };
    expect(() => tiny([step])).toThrow(/steps\.0\.event/);
  });
});
