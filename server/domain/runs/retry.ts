import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import type { RunEventInput } from "../events/catalogue";
import { enqueueDispatch, maxRetriesOf } from "./attempts";
import { recordCauser } from "./causers";
import { canRetryRun } from "./lifecycle";
import { lockRunOrThrow, queueAttempt, transitionAttempt, transitionRun } from "./transition";
import { requireRepositoryEnabled } from "./disabled";

// Retry: a new attempt of the same run (failed, cancelled or escalated), within the stack's
// retry bound. The run goes back to queued; the new attempt gets the next fencing token, so
// nothing a previous attempt's worker still sends can land.

export async function retryRun(opts: { db: Db; actor: AuditActor; runId: string; reason?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "retryRun", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    await requireRepositoryEnabled(tx, run.repositoryId, "a new attempt");
    const [attempts, snapshot] = await Promise.all([
      tx.dispatchAttempt.count({ where: { runId: opts.runId } }),
      tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: { stackSnapshot: true } }),
    ]);
    const maxRetries = maxRetriesOf(snapshot.stackSnapshot);
    const verdict = canRetryRun(run.status, { attempts, maxRetries });
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_retry" });
    const reason = opts.reason?.trim() || `${opts.actor.label} asked for a new attempt`;
    // An attempt still waiting from before the run ended (a cancel while queued) is closed first.
    const leftovers = await tx.dispatchAttempt.findMany({ where: { runId: opts.runId, status: "queued" }, select: { id: true, number: true, status: true } });
    const events: RunEventInput[] = [];
    for (const a of leftovers) await transitionAttempt(tx, { runId: opts.runId, attempt: a, to: "cancelled", reason: "superseded by a retry", now, events });
    await transitionRun(tx, { runId: opts.runId, from: run.status, to: "queued", reason, now, before: events });
    const attempt = await queueAttempt(tx, { runId: opts.runId, reason: `retry ${attempts} of ${maxRetries}: ${reason}`, now });
    await recordCauser(tx, { runId: opts.runId, userId: opts.actor.userId, cause: "retried" });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.retry",
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: run.repositoryId,
      detail: { from: run.status, attemptNumber: attempt.number, reason },
    });
    await enqueueDispatch(tx, opts.runId);
    return { runId: opts.runId, status: "queued" as const, attemptNumber: attempt.number };
  });
}
