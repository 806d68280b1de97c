import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentEvent, zAgentEvent } from "@/server/domain/events/catalogue";
import { type CommandAdapterConfig, createCommandAdapter } from "./command-adapter";
import { testSandbox } from "@/server/execution/sandbox/testing";
import { type AgentStartOptions, AgentStartError, type SessionEvent } from "./types";

// These tests run real child processes (node scripts under ./fixtures).

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const node = process.execPath;

let root: string;
let workspaceDir: string;
let artifactsDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "airlock-command-test-"));
  workspaceDir = join(root, "workspace");
  artifactsDir = join(root, "artifacts");
  await mkdir(workspaceDir);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function startAgent(
  argv: string[],
  config: Partial<CommandAdapterConfig> = {},
  options: Partial<AgentStartOptions> = {},
) {
  const adapter = createCommandAdapter({ argv, killGraceMs: 300, ...config });
  return adapter.start({
    prompt: "Diagnose the failing check",
    contextBundle: { pipeline: "ci / test" },
    workspaceDir,
    artifactsDir,
    env: {},
    limits: { wallClockMs: 10_000 },
    sandbox: testSandbox(),
    ...options,
  });
}

async function runAgent(argv: string[], config: Partial<CommandAdapterConfig> = {}, options: Partial<AgentStartOptions> = {}) {
  const session = await startAgent(argv, config, options);
  const events: AgentEvent[] = [];
  const sandboxEvents: SessionEvent[] = [];
  for await (const event of session.events) (event.type === "sandbox" ? sandboxEvents : events).push(event as AgentEvent);
  return { session, events, sandboxEvents, exit: await session.exit };
}

const texts = (events: SessionEvent[], type: SessionEvent["type"], stream?: string) =>
  events
    .filter((e) => e.type === type && (stream === undefined || (e.payload as { stream?: string }).stream === stream))
    .map((e) => (e.payload as { text: string }).text);

/** Alive and not a zombie (a killed orphan may linger as a zombie until init reaps it). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).charAt(0);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

/** Whether a process whose command line holds `marker` runs anywhere on this machine. */
function runsAnywhere(marker: string): boolean {
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) && isAlive(Number(pid))) return true;
    } catch {
      /* gone */
    }
  }
  return false;
}

function grandchildPid(events: SessionEvent[]): number {
  const text = texts(events, "message").find((t) => t.startsWith("grandchild "));
  return Number(text?.split(" ")[1]);
}

describe("command adapter: Airlock JSON lines", () => {
  it("emits every agent event type in order, with the prompt, context file and workspace", async () => {
    const { session, events, exit } = await runAgent([node, fixture("emit-events.mjs")]);

    expect(session.sessionId).toMatch(/^command-[0-9a-f-]{36}$/);
    expect(exit).toMatchObject({ status: "succeeded", exitCode: 0 });
    const types = new Set(events.map((e) => e.type));
    for (const type of zAgentEvent.options.map((o) => o.shape.type.value)) expect(types).toContain(type);
    for (const event of events) expect(zAgentEvent.safeParse(event).success).toBe(true);

    const messages = texts(events, "message");
    expect(messages.slice(0, 3)).toEqual([
      "prompt: Diagnose the failing check",
      "context: ci / test",
      `cwd: ${workspaceDir}`,
    ]);
    expect(events.find((e) => e.type === "tool_call")?.payload).toMatchObject({ id: "call-1", name: "Bash" });
    expect(events.find((e) => e.type === "tool_result")?.payload).toMatchObject({ toolCallId: "call-1", isError: true });
    expect(events.find((e) => e.type === "cost")?.payload).toEqual({ inputTokens: 1200, outputTokens: 340, usd: 0.0123 });
    expect(events.find((e) => e.type === "subagent_completed")?.payload).toMatchObject({ id: "sub-1", isError: false });
    // The last agent line comes before the artifacts and the exit note.
    expect(messages.at(-1)).toBe("done");
    expect(texts(events, "log", "system").at(-1)).toMatch(/^Agent exited: succeeded/);
  });

  it("keeps garbage as stdout log lines and never trusts forged or invalid events", async () => {
    const { events } = await runAgent([node, fixture("emit-events.mjs")]);
    const stdout = texts(events, "log", "stdout");
    expect(stdout).toEqual(
      expect.arrayContaining([
        "a structured log line",
        "plain progress output",
        "{not json at all",
        "[1, 2, 3]",
        '{"type":"unknown_kind","payload":{}}',
      ]),
    );
    expect(events.some((e) => (e.type as string) === "status")).toBe(false);
    const notes = texts(events, "log", "system");
    expect(notes).toContain("Ignored a status event from the agent: Airlock records these itself");
    expect(notes).toContain(
      "Ignored a artifact_produced event from the agent: write the file to the artifacts folder instead",
    );
    expect(notes.find((n) => n.startsWith("Ignored an invalid message event"))).toMatch(/payload\.role/);
    // The forged artifact is not reported; only real files are.
    expect(events.filter((e) => e.type === "artifact_produced").map((e) => e.payload.name)).not.toContain("x");
  });

  it("turns stderr into stderr log lines and reassembles a line split across writes", async () => {
    const { events } = await runAgent([node, fixture("emit-events.mjs")]);
    expect(texts(events, "log", "stderr")).toEqual(["warning: something on stderr"]);
    expect(texts(events, "message")).toContain("split across writes ✓");
  });

  it("collects artifacts with their sha256, size and kind, and skips symlinks", async () => {
    const { events, exit } = await runAgent([node, fixture("emit-events.mjs")]);
    const expected = ["diagnosis-sum.md", "fix.patch", "reports/summary.json"];
    expect(exit.artifacts.map((a) => a.name)).toEqual(expected);
    expect(exit.artifacts.map((a) => a.kind)).toEqual(["diagnosis", "patch", "report"]);
    for (const artifact of exit.artifacts) {
      const bytes = await readFile(join(artifactsDir, artifact.name));
      expect(artifact.digest).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
      expect(artifact.sizeBytes).toBe(bytes.length);
      expect(artifact.path).toBe(join(artifactsDir, artifact.name));
    }
    const produced = events.filter((e) => e.type === "artifact_produced").map((e) => e.payload);
    expect(produced).toEqual(
      exit.artifacts.map((a) => ({ kind: a.kind, name: a.name, digest: a.digest, sizeBytes: a.sizeBytes, mediaType: a.mediaType })),
    );
    expect(texts(events, "log", "system")).toContain("Artifact leak.txt not collected: symbolic links are not collected");
  });

  it("calls onEvent with the same events the iterable yields", async () => {
    const seen: SessionEvent[] = [];
    const { events, sandboxEvents } = await runAgent([node, fixture("emit-events.mjs")], {}, { onEvent: (e) => seen.push(e) });
    expect(seen.filter((e) => e.type !== "sandbox")).toEqual(events);
    // The sandbox's own events: what it enforced first, how it ended last.
    expect(sandboxEvents.map((e) => (e.payload as { phase: string }).phase)).toEqual(["started", "ended"]);
  });
});

describe("command adapter: environment", () => {
  it("gives the agent only the granted variables, a minimal PATH/HOME/LANG and AIRLOCK_*", async () => {
    process.env.AIRLOCK_TEST_PARENT_SECRET = "must-not-leak";
    try {
      // "node", not an absolute path: the command is found on the agent's PATH.
      const { events, exit } = await runAgent(["node", fixture("print-env.mjs")], {}, { env: { GRANTED_TOKEN: "t0k3n" } });
      expect(exit.status).toBe("succeeded");
      const env = JSON.parse(texts(events, "message")[0] ?? "{}") as Record<string, string>;
      expect(Object.keys(env).sort()).toEqual([
        "AIRLOCK_ARTIFACTS_DIR",
        "AIRLOCK_CONTEXT_FILE",
        "AIRLOCK_SESSION_ID",
        "AIRLOCK_WORKSPACE_DIR",
        "GRANTED_TOKEN",
        "HOME",
        "LANG",
        "PATH",
      ]);
      expect(env.AIRLOCK_TEST_PARENT_SECRET).toBeUndefined();
      expect(env.GRANTED_TOKEN).toBe("t0k3n");
      expect(env.AIRLOCK_ARTIFACTS_DIR).toBe(artifactsDir);
      expect(env.HOME).not.toBe(process.env.HOME);
      // The per-session HOME and context file are removed at exit.
      expect(existsSync(env.HOME ?? "/nonexistent")).toBe(false);
      expect(existsSync(env.AIRLOCK_CONTEXT_FILE ?? "/nonexistent")).toBe(false);
    } finally {
      delete process.env.AIRLOCK_TEST_PARENT_SECRET;
    }
  });

  it("does not let granted variables override AIRLOCK_ARTIFACTS_DIR", async () => {
    const { events } = await runAgent([node, fixture("print-env.mjs")], {}, { env: { AIRLOCK_ARTIFACTS_DIR: "/etc" } });
    const env = JSON.parse(texts(events, "message")[0] ?? "{}") as Record<string, string>;
    expect(env.AIRLOCK_ARTIFACTS_DIR).toBe(artifactsDir);
  });
});

describe("command adapter: stopping", () => {
  it("cancels with SIGTERM, then SIGKILLs the whole process group after the grace period", async () => {
    let started!: () => void;
    const ready = new Promise<void>((r) => (started = r));
    const session = await startAgent([node, fixture("ignore-sigterm.mjs")], {}, {
      onEvent: (e) => e.type === "message" && started(),
    });
    const events: SessionEvent[] = [];
    const reading = (async () => {
      for await (const e of session.events) events.push(e);
    })();
    await ready;
    const t0 = Date.now();
    session.cancel("stopped by a maintainer");
    session.cancel("a second cancel is ignored");
    const exit = await session.exit;
    await reading;

    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(exit).toMatchObject({ status: "cancelled", exitCode: null });
    expect(exit.reason).toBe("stopped by a maintainer (killed after 0.3 s grace)");
    expect(texts(events, "log", "stdout")).toContain("ignoring SIGTERM");
    expect(texts(events, "log", "system")).toContain("The agent did not exit within 0.3 s of SIGTERM: SIGKILL");
    const pid = grandchildPid(events);
    expect(pid).toBeGreaterThan(0);
    // The pid printed is the sandbox's own; on the host, look for its command line.
    expect(await waitUntil(() => !runsAnywhere(`grandchild-of-${session.sessionId}`))).toBe(true);
  });

  it("reaps processes the agent left behind when it exits", async () => {
    const { events, exit, session } = await runAgent([node, fixture("leave-orphan.mjs")]);
    expect(exit.status).toBe("succeeded");
    const pid = grandchildPid(events);
    expect(pid).toBeGreaterThan(0);
    expect(await waitUntil(() => !runsAnywhere(`grandchild-of-${session.sessionId}`))).toBe(true);
  });

  it("times out at the wall-clock limit", async () => {
    const t0 = Date.now();
    // Long enough for the sandbox and Node to start on a loaded machine (the agent says "working"
    // first); the stop itself must come promptly after the limit.
    const { events, exit } = await runAgent([node, fixture("sleep-forever.mjs")], {}, { limits: { wallClockMs: 2000 } });
    expect(exit).toMatchObject({ status: "timed_out", reason: "wall-clock limit of 2 s reached" });
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(texts(events, "message")).toEqual(["working"]);
  });

  it("emits heartbeats while the agent runs, when asked to", async () => {
    const { session, events } = await runAgent(
      [node, fixture("sleep-forever.mjs")],
      { heartbeatIntervalMs: 50 },
      { limits: { wallClockMs: 300 } },
    );
    const beats = events.filter((e) => e.type === "heartbeat");
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats[0]?.payload).toEqual({ sessionId: session.sessionId });
  });

  it("cancels when the abort signal fires", async () => {
    const controller = new AbortController();
    const session = await startAgent([node, fixture("sleep-forever.mjs")], {}, { signal: controller.signal });
    setTimeout(() => controller.abort("the run was cancelled"), 100);
    const exit = await session.exit;
    expect(exit).toMatchObject({ status: "cancelled", reason: "the run was cancelled" });
  });

  it("flushes a partial last line and reports the exit code with the last stderr line", async () => {
    const { events, exit } = await runAgent([node, fixture("exit-mid-line.mjs")]);
    expect(texts(events, "message")).toEqual(["complete"]);
    expect(texts(events, "log", "stdout")).toEqual(['{"type":"message","payload":{"role":"assis']);
    expect(exit).toMatchObject({ status: "failed", exitCode: 3 });
    expect(exit.reason).toContain("exited with code 3: fatal: out of coffee");
  });
});

describe("command adapter: failing to start", () => {
  it("rejects with the reason when the command does not exist", async () => {
    const started = startAgent(["airlock-no-such-command", "--help"]);
    await expect(started).rejects.toBeInstanceOf(AgentStartError);
    await expect(started).rejects.toThrow("could not start `airlock-no-such-command`: command not found");
  });

  it("rejects when the workspace does not exist", async () => {
    await expect(startAgent([node, fixture("print-env.mjs")], {}, { workspaceDir: join(root, "missing") })).rejects.toThrow(
      /the workspace .*missing does not exist/,
    );
  });

  it("rejects when the artifacts folder cannot be created", async () => {
    await writeFile(join(root, "a-file"), "");
    const started = startAgent([node, fixture("print-env.mjs")], {}, { artifactsDir: join(root, "a-file", "artifacts") });
    await expect(started).rejects.toBeInstanceOf(AgentStartError);
    await expect(started).rejects.toThrow(/^could not prepare the session: ENOTDIR/);
  });

  it("rejects an invalid environment variable name", async () => {
    await expect(startAgent([node, fixture("print-env.mjs")], {}, { env: { "BAD=NAME": "x" } })).rejects.toThrow(
      'invalid environment variable name "BAD=NAME"',
    );
  });

  it("rejects when already aborted", async () => {
    await expect(startAgent([node, fixture("print-env.mjs")], {}, { signal: AbortSignal.abort() })).rejects.toThrow(
      "cancelled before the agent started",
    );
  });
});

describe("command adapter: Claude Code stream-json", () => {
  it("parses a recorded Claude Code transcript from stdout", async () => {
    const { events, exit } = await runAgent([node, fixture("replay-file.mjs"), fixture("claude/diagnose-sum.jsonl")]);
    expect(exit).toMatchObject({ status: "succeeded", externalSessionId: "5b1f0c7e-3d2a-4c8e-9f61-2a7d0e4b9c13" });
    expect(events[0]).toMatchObject({ type: "message", payload: { role: "system" } });
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.payload.name)).toEqual([
      "Bash",
      "Task",
      "Grep",
      "Read",
      "Edit",
      "Bash",
    ]);
    expect(events.filter((e) => e.type === "subagent_started")).toHaveLength(1);
    expect(events.filter((e) => e.type === "cost").at(-1)?.payload).toMatchObject({ usd: 0.0841237, outputTokens: 889 });
    expect(texts(events, "log", "stdout")).toEqual([]);
  });

  it("fails the attempt when Claude Code reports an error result, even with exit code 0", async () => {
    const { exit } = await runAgent([node, fixture("replay-file.mjs"), fixture("claude/max-turns.jsonl")]);
    expect(exit).toMatchObject({ status: "failed", exitCode: 0, reason: "Claude Code ended with error_max_turns after $0.0123" });
  });

  it("reads Claude lines as plain text when the format is forced to airlock", async () => {
    const { events } = await runAgent([node, fixture("replay-file.mjs"), fixture("claude/max-turns.jsonl")], {
      outputFormat: "airlock",
    });
    expect(texts(events, "log", "stdout")).toHaveLength(3);
  });
});
