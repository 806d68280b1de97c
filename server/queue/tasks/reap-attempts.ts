import { reapLostAttempts, sweepQueuedRuns } from "@/server/domain/runs/reaper";
import { sweepWorkspaces } from "@/server/execution/workspaces/workspaces";
import { enqueue } from "../enqueue";
import { releaseDeadWorkerJobs } from "../recovery";
import type { WorkerContext } from "../worker-context";

// "attempts.reap": the periodic recovery pass. Attempts whose lease ran out are marked lost and
// retried within their bound; jobs locked by dead workers are unlocked; queued runs without a
// dispatch job get one; expired workspaces are removed. It re-adds itself (one pending job,
// by job key, however many workers there are); a crontab entry restarts the chain if it breaks.

export const REAP_JOB_KEY = "attempts.reap";

export async function reapAttemptsTask(_payload: unknown, ctx: WorkerContext): Promise<void> {
  const { db, settings } = ctx;
  try {
    const reaped = await reapLostAttempts({ db, leaseMs: settings.leaseMs });
    for (const r of reaped) {
      const what = r.outcome.retried ? `retrying as attempt ${r.outcome.nextAttempt}` : `run is ${r.outcome.runStatus}`;
      ctx.log(`run ${r.runId}: attempt ${r.attemptNumber} lost (${what})`);
    }
    const released = await releaseDeadWorkerJobs(db, Math.min(settings.leaseMs, 30_000));
    if (released.length > 0) ctx.log(`released jobs of dead workers ${released.join(", ")}`);
    const swept = await sweepQueuedRuns({ db });
    if (swept.length > 0) ctx.log(`re-enqueued ${swept.length} queued run(s) with no dispatch job`);
    await sweepWorkspaces({
      dataDir: settings.dataDir,
      now: new Date(),
      orphanAfterMs: Math.max(settings.keepFailedWorkspaceMs, settings.leaseMs * 2),
      isActive: async (runId, attemptNumber) =>
        (await db.dispatchAttempt.count({ where: { runId, number: attemptNumber, status: { in: ["queued", "starting", "running"] } } })) > 0,
    });
  } finally {
    await enqueue(db, "attempts.reap", {}, { jobKey: REAP_JOB_KEY, runAt: new Date(Date.now() + settings.reapIntervalMs), maxAttempts: 3 });
  }
}
