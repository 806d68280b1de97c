import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import type { AttemptStatus } from "@/server/db/generated/enums";
import { enqueueDispatch, loseAttempt, type LoseOutcome } from "./attempts";
import { isActiveAttempt } from "./lifecycle";
import { lockRun } from "./transition";

// Recovery of work whose worker died: attempts whose lease (heartbeat) ran out are marked lost
// and retried within their stack's bound, and queued runs with no pending dispatch job get one.
// Both are safe to run from any number of workers at once: each attempt is re-checked under its
// run's row lock before it is touched, and dispatch jobs are deduplicated by job key.

export type ReapedAttempt = { runId: string; attemptNumber: number; outcome: LoseOutcome };

export async function reapLostAttempts(opts: { db: Db; leaseMs: number; now?: Date; limit?: number }): Promise<ReapedAttempt[]> {
  const now = opts.now ?? new Date();
  const cutoff = new Date(now.getTime() - opts.leaseMs);
  const stale = await opts.db.dispatchAttempt.findMany({
    where: {
      status: { in: ["starting", "running"] },
      OR: [{ heartbeatAt: { lt: cutoff } }, { heartbeatAt: null, queuedAt: { lt: cutoff } }],
    },
    select: { id: true, runId: true },
    orderBy: { heartbeatAt: "asc" },
    take: opts.limit ?? 100,
  });
  const reaped: ReapedAttempt[] = [];
  for (const candidate of stale) {
    const result = await transaction(opts.db, "reapLostAttempt", async (tx) => {
      await lockRun(tx, candidate.runId);
      // Re-read under the lock: a heartbeat or a finish may have landed since the scan.
      const [a] = await tx.$queryRaw<{ number: number; status: AttemptStatus; heartbeatAt: Date | null; queuedAt: Date }[]>`
        SELECT "number", "status", "heartbeatAt", "queuedAt" FROM "DispatchAttempt" WHERE "id" = ${candidate.id}`;
      const last = a?.heartbeatAt ?? a?.queuedAt;
      if (!a || !last || !isActiveAttempt(a.status) || last >= cutoff) return null;
      const silentFor = Math.round((now.getTime() - last.getTime()) / 1000);
      const reason = `no heartbeat for ${silentFor} s (lease ${Math.round(opts.leaseMs / 1000)} s): the worker holding it stopped`;
      const outcome = await loseAttempt(tx, { runId: candidate.runId, attempt: { id: candidate.id, number: a.number, status: a.status }, reason, now });
      return { runId: candidate.runId, attemptNumber: a.number, outcome };
    });
    if (result) reaped.push(result);
  }
  return reaped;
}

/**
 * Queued runs with no dispatch job waiting for them (the job was lost, failed for good, or never
 * added) get one, so no queued run is forgotten. Returns the run ids re-enqueued.
 */
export async function sweepQueuedRuns(opts: { db: Db; limit?: number }): Promise<string[]> {
  const rows = await opts.db.$queryRaw<{ id: string }[]>`
    SELECT r."id" FROM "AgentDispatchRun" r
    WHERE r."status" = 'queued'
      AND NOT EXISTS (
        SELECT 1 FROM graphile_worker._private_jobs j
        JOIN graphile_worker._private_tasks t ON t."id" = j."task_id"
        WHERE t."identifier" = 'run.dispatch' AND j."payload"->>'runId' = r."id" AND j."attempts" < j."max_attempts")
      -- A run whose attempt is already being started needs no job.
      AND NOT EXISTS (
        SELECT 1 FROM "DispatchAttempt" a WHERE a."runId" = r."id" AND a."status" IN ('starting', 'running'))
    ORDER BY r."createdAt" LIMIT ${opts.limit ?? 500}`;
  for (const row of rows) await enqueueDispatch(opts.db, row.id);
  return rows.map((r) => r.id);
}
