import { transaction } from "@/server/db";
import { settleRun } from "@/server/domain/approvals/settle-run";
import { afterRunEnded } from "@/server/domain/fixloop/spawn";
import { requestDiagnosisComment } from "@/server/domain/writebacks/diagnosis-comment";
import { followRunOnGithub } from "@/server/domain/check-runs/surface";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

// Reactions to lifecycle changes. runs/transition.ts and approvals/transition.ts enqueue these
// jobs in the transaction that writes the change, so they exist exactly when it commits; each
// handler reads the state again under its own locks, so a retried (or duplicated) job finds the
// work done and does nothing twice.

/**
 * "run.ended": the fix loop takes up a rejection deferred behind the run (afterRunEnded); a
 * succeeded diagnosis run's summary is posted on its PR when the change gate exempts it
 * (requestDiagnosisComment, which finds an earlier request and makes no second one).
 */
export async function runEndedTask(payload: unknown, ctx: Pick<WorkerContext, "db" | "log">): Promise<void> {
  const job = parseJobPayload("run.ended", payload);
  const outcomes = await transaction(ctx.db, "runEnded", (tx) => afterRunEnded(tx, job.runId, new Date()));
  for (const o of outcomes) ctx.log(`run ${job.runId} ended: deferred rejection ${o.kind}${"reason" in o ? ` (${o.reason})` : ""}`);
  if (job.status === undefined || job.status === "succeeded") {
    const comment = await requestDiagnosisComment({ db: ctx.db, runId: job.runId, by: null });
    if (comment.kind === "direct") ctx.log(`run ${job.runId} ended: diagnosis comment ${comment.writeBackId} queued (${comment.reason})`);
    // An exempt diagnosis also goes on the run's GitHub check run (check-runs/sync.ts).
    if (comment.kind === "direct") await followRunOnGithub(ctx.db, job.runId);
  }
}

/** "approval.decided": the run awaiting approval settles once nothing is left open (settleRun). */
export async function approvalDecidedTask(payload: unknown, ctx: Pick<WorkerContext, "db" | "log">): Promise<void> {
  const job = parseJobPayload("approval.decided", payload);
  const to = await transaction(ctx.db, "settleRun", (tx) => settleRun(tx, job.runId, new Date()));
  if (to) ctx.log(`run ${job.runId} settled: ${to}`);
}
