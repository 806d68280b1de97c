import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import { getDb } from "@/server/db";
import { cancelRun } from "@/server/domain/run-engine/cancel";
import { enqueueDispatch } from "@/server/domain/runs/attempts";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "./testing/fixtures";
import { startWorker } from "./worker";

// A worker running in this process (graphile-worker, LISTEN/NOTIFY, the cancel listener):
// pickup latency, and a cancel that stops a running agent within 5 s.

const scenario = getBuiltInScenario("sum-off-by-one")!;
let worker: Awaited<ReturnType<typeof startWorker>>;
let local: Awaited<ReturnType<typeof createLocalRepository>>;
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  user = await createUser();
  local = await createLocalRepository({ files: scenario.assumes!.files, members: [[user, "maintainer"]] });
  await createPool({ concurrency: 4 });
  worker = await startWorker({ settings: { dataDir: local.dataDir, heartbeatIntervalMs: 500, keepFailedWorkspaceMs: 0, scriptedSpeed: 20 }, demo: false });
});
afterAll(async () => {
  await worker.stop();
});

async function until<T>(probe: () => Promise<T | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("worker", () => {
  it("stops a running agent within 5 s of a cancel, through NOTIFY", async () => {
    const db = getDb();
    const sleeper = resolve("server/execution/agents/fixtures/sleep-forever.mjs");
    const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", sleeper], env: [], outputFormat: "airlock" } }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
    const queuedAt = Date.now();
    await enqueueDispatch(db, run.id);
    const attempt = await until(() => db.dispatchAttempt.findFirst({ where: { runId: run.id, status: "running" } }));
    expect(attempt.startedAt!.getTime() - queuedAt).toBeLessThan(5_000);
    await until(() => db.runEvent.findFirst({ where: { runId: run.id, type: "message", attemptId: attempt.id } }));

    const cancelledAt = Date.now();
    await cancelRun({ db, actor: { userId: user.id, label: user.email }, runId: run.id, reason: "not needed" });
    const stopped = await until(() =>
      db.runEvent.findFirst({ where: { runId: run.id, type: "log", payload: { path: ["text"], string_contains: "the agent session stopped" } } }),
    );
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    expect((stopped.payload as { text: string }).text).toMatch(/stopped \d+ ms after the run was cancelled/);
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true } });
    expect(after.status).toBe("cancelled");
    expect(after.attempts[0]!.status).toBe("cancelled");
    await until(async () => worker.ctx.registry.size === 0 || null, 2_000);
  });

  it("names its liveness connection after its graphile-worker pool, so others can tell it is alive", async () => {
    const poolId = worker.ctx.workerRef().split("/")[2]!;
    expect(poolId).toMatch(/^pool-[0-9a-f]+$/);
    const rows = await getDb().$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${`airlock-worker:${poolId}`}`;
    expect(rows[0]?.n).toBe(1);
  });

  it("picks up a queued run through NOTIFY and runs it to approval", async () => {
    const db = getDb();
    const stack = await createStack(scriptedSpec());
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
    const queuedAt = Date.now();
    await enqueueDispatch(db, run.id);
    const attempt = await until(() => db.dispatchAttempt.findFirst({ where: { runId: run.id, status: { not: "queued" } } }));
    // Pickup is by LISTEN/NOTIFY, not by the 2 s poll.
    expect(attempt.heartbeatAt!.getTime() - queuedAt).toBeLessThan(1_500);
    const done = await until(async () => {
      const r = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } });
      return r.status === "awaiting_approval" ? r : null;
    }, 60_000);
    expect(done.status).toBe("awaiting_approval");
  }, 90_000);

  // Last: it stops the worker.
  it("on shutdown hands its running attempts back: lost now, retried by the next worker", async () => {
    const db = getDb();
    const sleeper = resolve("server/execution/agents/fixtures/sleep-forever.mjs");
    const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", sleeper], env: [], outputFormat: "airlock" } }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
    await enqueueDispatch(db, run.id);
    await until(() => db.dispatchAttempt.findFirst({ where: { runId: run.id, status: "running" } }));
    await worker.stop();
    const attempts = await db.dispatchAttempt.findMany({ where: { runId: run.id }, orderBy: { number: "asc" } });
    expect(attempts.map((a) => [a.number, a.status])).toEqual([
      [1, "lost"],
      [2, "queued"],
    ]);
    expect(attempts[0]!.exitReason).toMatch(/worker shut down/);
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
  });
});
