import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import { getDb } from "@/server/db";
import { appendAttemptEvents, isFencedError } from "@/server/domain/runs/attempt-fence";
import { createUser } from "@/server/testing/factories";
import { enqueue } from "./enqueue";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "./testing/fixtures";

// A real worker process is killed with SIGKILL in the middle of an attempt; a new worker
// process starts. The lost attempt must be detected by its lease, retried once (the stack's
// bound), and the run must end exactly as an uninterrupted one would, with a gap-free
// transcript in which no event is lost or doubled, while the dead attempt's token is refused.

const scenario = getBuiltInScenario("sum-off-by-one")!;
const children: ChildProcess[] = [];
let output = "";

function startWorkerProcess(dataDir: string): ChildProcess {
  // `node --import tsx`, not the tsx binary: that one forks, and SIGKILL would hit only its parent.
  const child = spawn(process.execPath, ["--import", "tsx", "server/queue/worker.ts"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      AIRLOCK_DATA_DIR: dataDir,
      AIRLOCK_SCRIPTED_SPEED: "4",
      AIRLOCK_HEARTBEAT_INTERVAL_MS: "300",
      AIRLOCK_ATTEMPT_LEASE_MS: "2000",
      AIRLOCK_REAP_INTERVAL_MS: "400",
      AIRLOCK_WORKER_POLL_MS: "500",
      AIRLOCK_DEMO_BOOTSTRAP: "0",
    },
  });
  // Kept for the failure message: a worker that does not start says why.
  const keep = (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-4000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  children.push(child);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; worker output:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

/** The agent's own events (not heartbeats, logs or Airlock's notes), as type + identity. */
const agentTrace = (events: { type: string; payload: unknown }[]) =>
  events
    .filter((e) => ["message", "tool_call", "tool_result", "subagent_started", "subagent_completed", "cost"].includes(e.type))
    .filter((e) => !(e.type === "message" && (e.payload as { role: string }).role === "system"))
    .map((e) => {
      const p = e.payload as { id?: string; toolCallId?: string; text?: string; inputTokens?: number };
      return `${e.type}:${p.id ?? p.toolCallId ?? p.text?.slice(0, 40) ?? p.inputTokens ?? ""}`;
    });

describe("worker killed with SIGKILL mid-attempt", () => {
  it("marks the attempt lost on restart, retries within the bound, keeps seq gap-free and refuses the lost token", { timeout: 120_000 }, async () => {
    const db = getDb();
    const user = await createUser();
    const local = await createLocalRepository({ files: scenario.assumes!.files, members: [[user, "maintainer"]] });
    await createPool({ concurrency: 1 });
    const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries: 1 } }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });

    const first = startWorkerProcess(local.dataDir);
    await enqueue(db, "run.dispatch", { runId: run.id });
    const attempt1 = await until(
      "attempt 1 to be running with some events",
      async () => {
        const a = await db.dispatchAttempt.findFirst({ where: { runId: run.id, number: 1, status: "running" } });
        const n = a ? await db.runEvent.count({ where: { runId: run.id, attemptId: a.id, type: { in: ["tool_call", "tool_result"] } } }) : 0;
        return n >= 2 ? a : null;
      },
      60_000,
    );
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    const committedBeforeKill = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });

    const killedAt = Date.now();
    startWorkerProcess(local.dataDir);
    const final = await until(
      "the retried run to await approval",
      async () => {
        const r = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } });
        return r.status === "awaiting_approval" || r.status === "failed" ? r : null;
      },
      90_000,
    );
    expect(final.status).toBe("awaiting_approval");

    const attempts = await db.dispatchAttempt.findMany({ where: { runId: run.id }, orderBy: { number: "asc" } });
    expect(attempts.map((a) => [a.number, a.status, a.fencingToken])).toEqual([
      [1, "lost", 1],
      [2, "succeeded", 2],
    ]);
    expect(attempts[0]!.exitReason).toMatch(/no heartbeat/);
    // Detected within lease + a reaper pass or two, not graphile-worker's 4-hour lock timeout.
    expect(attempts[0]!.finishedAt!.getTime() - killedAt).toBeLessThan(15_000);

    const events = await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).lastEventSeq).toBe(events.length);
    // Nothing committed before the kill was lost or rewritten.
    expect(events.slice(0, committedBeforeKill.length).map((e) => [e.seq, e.type, e.attemptId])).toEqual(
      committedBeforeKill.map((e) => [e.seq, e.type, e.attemptId]),
    );
    // The retry's transcript is the scenario, each agent event exactly once.
    const expected = agentTrace(scenario.steps.map((s) => s.event));
    expect(agentTrace(events.filter((e) => e.attemptId === attempts[1]!.id))).toEqual(expected);
    // The killed attempt's events are a prefix of the same scenario: none doubled.
    const partial = agentTrace(events.filter((e) => e.attemptId === attempt1.id));
    expect(partial).toEqual(expected.slice(0, partial.length));
    expect(await db.artifact.count({ where: { runId: run.id, attemptId: attempt1.id } })).toBe(0);

    // The dead worker's token, replayed now, is refused.
    const late = await appendAttemptEvents({
      db,
      fence: { runId: run.id, attemptId: attempt1.id, fencingToken: attempt1.fencingToken },
      events: [{ type: "message", payload: { role: "assistant", text: "late" } }],
    }).catch((err: unknown) => err);
    expect(isFencedError(late)).toBe(true);
    expect(await db.runEvent.count({ where: { runId: run.id } })).toBe(events.length);
  });
});
