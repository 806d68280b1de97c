import pg from "pg";
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { enqueue } from "@/server/queue/enqueue";
import { releaseDeadWorkerJobs, workerApplicationName } from "@/server/queue/recovery";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { createRepository } from "@/server/testing/factories";
import { appendAttemptEvents, isFencedError } from "./attempt-fence";
import { finishAttempt, storeAttemptArtifact } from "../run-engine/finish-attempt";
import { reapLostAttempts, sweepQueuedRuns } from "./reaper";

const db = () => getDb();

async function runningAttempt(maxRetries: number) {
  const repo = await createRepository();
  const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries } }));
  const run = await createExecRun({ repositoryId: repo.id, stack, sha: "a".repeat(40) });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "running" } });
  const attempt = await db().dispatchAttempt.create({
    data: { runId: run.id, number: 1, status: "running", fencingToken: 1, heartbeatAt: new Date(Date.now() - 120_000) },
  });
  return { run, attempt, fence: { runId: run.id, attemptId: attempt.id, fencingToken: 1 } };
}

const pendingDispatchJobs = (runId: string) =>
  db().$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'run.dispatch' AND j.payload->>'runId' = ${runId}`.then((r) => r[0]?.n ?? 0);

describe("attempt fencing and the reaper", () => {
  it("marks a silent attempt lost, queues its successor, and refuses every late write from the lost one", async () => {
    const { run, attempt, fence } = await runningAttempt(2);
    await appendAttemptEvents({ db: db(), fence, events: [{ type: "message", payload: { role: "assistant", text: "before" } }] });
    // That write renewed the lease; make it stale again.
    await db().dispatchAttempt.update({ where: { id: attempt.id }, data: { heartbeatAt: new Date(Date.now() - 120_000) } });

    const reaped = await reapLostAttempts({ db: db(), leaseMs: 60_000 });
    expect(reaped).toEqual([{ runId: run.id, attemptNumber: 1, outcome: { retried: true, nextAttempt: 2 } }]);
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: { orderBy: { number: "asc" } } } });
    expect(after.status).toBe("queued");
    expect(after.attempts.map((a) => [a.number, a.status, a.fencingToken])).toEqual([
      [1, "lost", 1],
      [2, "queued", 2],
    ]);
    expect(after.attempts[0]!.exitReason).toMatch(/no heartbeat for \d+ s/);
    expect(await pendingDispatchJobs(run.id)).toBe(1);
    const seqBefore = after.lastEventSeq;

    // The worker that held attempt 1 wakes up: events, an artifact and its outcome are all refused.
    const late = [
      appendAttemptEvents({ db: db(), fence, events: [{ type: "message", payload: { role: "assistant", text: "too late" } }] }),
      storeAttemptArtifact({
        db: db(),
        fence,
        artifact: { kind: "patch", name: "x.patch", mediaType: "text/x-diff", digest: `sha256:${"1".repeat(64)}`, sizeBytes: 1, content: "x", location: null, retainUntil: null },
        secrets: [],
      }),
      // The fence is checked before the run is read, so no run details are needed here.
      finishAttempt({ db: db(), fence, run: {} as never, end: { status: "succeeded", reason: "done" }, artifacts: [], approvalTtlMs: 1000 }),
    ];
    for (const write of await Promise.allSettled(late)) {
      expect(write.status).toBe("rejected");
      expect(isFencedError((write as PromiseRejectedResult).reason)).toBe(true);
    }
    const final = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { events: { orderBy: { seq: "asc" } }, artifacts: true } });
    expect(final.lastEventSeq).toBe(seqBefore);
    expect(final.artifacts).toHaveLength(0);
    expect(final.events.map((e) => e.seq)).toEqual(final.events.map((_, i) => i + 1));
    expect(final.events.some((e) => (e.payload as { text?: string }).text === "too late")).toBe(false);

    // A stale token on the new attempt's id is refused too (token, not just status, is checked).
    const next = after.attempts[1]!;
    await db().dispatchAttempt.update({ where: { id: next.id }, data: { status: "running" } });
    await expect(appendAttemptEvents({ db: db(), fence: { ...fence, attemptId: next.id }, events: [{ type: "heartbeat", payload: {} }] })).rejects.toMatchObject({ reason: "fenced" });
    await expect(appendAttemptEvents({ db: db(), fence: { ...fence, attemptId: next.id, fencingToken: 2 }, events: [{ type: "heartbeat", payload: {} }] })).resolves.toMatchObject({ lastSeq: seqBefore + 1 });
  });

  it("past the stack's retry bound a lost attempt fails the run", async () => {
    const { run } = await runningAttempt(0);
    const [reaped] = await reapLostAttempts({ db: db(), leaseMs: 60_000 });
    expect(reaped?.outcome).toEqual({ retried: false, runStatus: "failed" });
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts).toHaveLength(1);
    expect(await pendingDispatchJobs(run.id)).toBe(0);
  });

  it("leaves attempts with a fresh heartbeat alone", async () => {
    const { run, attempt } = await runningAttempt(2);
    await db().dispatchAttempt.update({ where: { id: attempt.id }, data: { heartbeatAt: new Date() } });
    expect(await reapLostAttempts({ db: db(), leaseMs: 60_000 })).toEqual([]);
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("running");
  });

  it("keeps seq gap-free when many fenced batches and the reaper race", async () => {
    const { run, fence } = await runningAttempt(3);
    await db().dispatchAttempt.update({ where: { id: fence.attemptId }, data: { heartbeatAt: new Date() } });
    const batches = Array.from({ length: 30 }, (_, i) =>
      appendAttemptEvents({ db: db(), fence, events: Array.from({ length: 10 }, (_, j) => ({ type: "log" as const, payload: { stream: "stdout" as const, text: `${i}.${j}` } })) }),
    );
    const results = await Promise.allSettled([...batches, reapLostAttempts({ db: db(), leaseMs: 0 })]);
    const events = await db().runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const accepted = results.slice(0, 30).filter((r) => r.status === "fulfilled").length;
    // Every accepted batch landed whole; every refused one left nothing behind.
    expect(events.filter((e) => e.type === "log")).toHaveLength(accepted * 10);
  });
});

describe("recovery sweeps", () => {
  it("re-enqueues a queued run that has no dispatch job, and only that one", async () => {
    const repo = await createRepository();
    const stack = await createStack(scriptedSpec());
    const orphan = await createExecRun({ repositoryId: repo.id, stack, sha: "b".repeat(40) });
    const withJob = await createExecRun({ repositoryId: repo.id, stack, sha: "c".repeat(40) });
    await enqueue(db(), "run.dispatch", { runId: withJob.id });
    const swept = await sweepQueuedRuns({ db: db() });
    expect(swept).toContain(orphan.id);
    expect(swept).not.toContain(withJob.id);
    expect(await pendingDispatchJobs(orphan.id)).toBe(1);
    expect(await pendingDispatchJobs(withJob.id)).toBe(1);
  });

  it("unlocks jobs held by a dead worker, not those of a live one", async () => {
    await enqueue(db(), "ci.run", { repositoryId: "dead" });
    await enqueue(db(), "ci.run", { repositoryId: "live" });
    const lock = (repositoryId: string, pool: string) =>
      db().$executeRaw`UPDATE graphile_worker._private_jobs SET locked_by = ${pool}, locked_at = now() - interval '10 minutes' WHERE payload->>'repositoryId' = ${repositoryId}`;
    await lock("dead", "pool-dead0000");
    await lock("live", "pool-live0000");
    const live = new pg.Client({ connectionString: process.env.DATABASE_URL, application_name: workerApplicationName("pool-live0000") });
    await live.connect();
    try {
      const released = await releaseDeadWorkerJobs(db(), 1000);
      expect(released).toEqual(["pool-dead0000"]);
      const rows = await db().$queryRaw<{ repositoryId: string; locked_by: string | null }[]>`
        SELECT payload->>'repositoryId' AS "repositoryId", locked_by FROM graphile_worker._private_jobs WHERE payload->>'repositoryId' IN ('dead', 'live') ORDER BY 1`;
      expect(rows).toEqual([
        { repositoryId: "dead", locked_by: null },
        { repositoryId: "live", locked_by: "pool-live0000" },
      ]);
    } finally {
      await live.end();
    }
  });
});
