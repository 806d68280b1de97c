import type { Db } from "@/server/db";

// Prompt recovery of jobs held by a dead worker. graphile-worker (OSS) releases a crashed
// worker's job locks only after 4 hours; we do better. Every worker process keeps one
// connection whose application_name is `airlock-worker:<its worker pool id>` (the pool id is
// what graphile-worker writes in locked_by). A process killed by SIGKILL loses that connection
// at once, so a job locked by a pool id that no session carries any more belongs to a dead
// worker and is unlocked for another worker to retry (handlers are idempotent).

export const WORKER_APPLICATION_PREFIX = "airlock-worker:";

export function workerApplicationName(workerPoolId: string): string {
  return `${WORKER_APPLICATION_PREFIX}${workerPoolId}`.slice(0, 63);
}

/** Unlocks jobs (and job queues) held by worker pools with no live session; returns their ids. */
export async function releaseDeadWorkerJobs(db: Db, graceMs: number): Promise<string[]> {
  const rows = await db.$queryRaw<{ lockedBy: string }[]>`
    SELECT DISTINCT j."locked_by" AS "lockedBy" FROM graphile_worker._private_jobs j
    WHERE j."locked_by" IS NOT NULL
      AND j."locked_at" < now() - make_interval(secs => ${graceMs / 1000}::float8)
      AND NOT EXISTS (
        SELECT 1 FROM pg_stat_activity a
        WHERE a."application_name" = left(${WORKER_APPLICATION_PREFIX} || j."locked_by", 63))`;
  const ids = rows.map((r) => r.lockedBy);
  if (ids.length > 0) await db.$executeRaw`SELECT graphile_worker.force_unlock_workers(${ids}::text[])`;
  return ids;
}
