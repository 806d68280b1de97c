import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import type { AuditActor } from "../audit";
import type { RunEventInput } from "../events/catalogue";
import { transitionApproval } from "../approvals/transition";
import { canCancelRun, isActiveAttempt } from "../runs/lifecycle";
import { lockRunOrThrow, transitionAttempt, transitionRun } from "../runs/transition";

/** Workers LISTEN here to stop the adapter session of a cancelled run. */
export const RUN_CANCEL_CHANNEL = "airlock_run_cancel";

/**
 * Cancels a run: the run and its live attempt become `cancelled`, with an audit
 * entry and a status event, in one transaction. The row lock makes concurrent
 * cancels (or a cancel racing a status change) take effect once; the loser is
 * told why. Its pending approvals are withdrawn (expired, with the reason). The worker running the attempt hears it through NOTIFY at commit.
 */
export async function cancelRun(opts: { db: Db; actor: AuditActor; runId: string; reason?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  const reason = opts.reason?.trim() || `Cancelled by ${opts.actor.label}`;
  return transaction(opts.db, "cancelRun", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    const verdict = canCancelRun(run.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_cancel" });

    const attempts = await tx.dispatchAttempt.findMany({
      where: { runId: opts.runId },
      select: { id: true, number: true, status: true },
    });
    const live = attempts.filter((a) => isActiveAttempt(a.status));
    const events: RunEventInput[] = [];
    for (const a of live) await transitionAttempt(tx, { runId: opts.runId, attempt: a, to: "cancelled", reason, now, events });
    await transitionRun(tx, {
      runId: opts.runId,
      from: run.status,
      to: "cancelled",
      reason,
      now,
      before: events,
      audit: { actor: opts.actor, action: "run.cancel", repositoryId: run.repositoryId, detail: { from: run.status, reason, attemptsCancelled: live.map((a) => a.number) } },
    });
    // Its pending approvals are withdrawn (a write-back or a privileged launch of a cancelled run
    // must not stay in anyone's queue, nor be approvable).
    const pending = await tx.approvalRequest.findMany({ where: { runId: opts.runId, status: "pending" }, select: { id: true } });
    for (const a of pending) {
      await transitionApproval(tx, { approval: { id: a.id, runId: opts.runId, status: "pending" }, to: "expired", data: { decidedAt: now, reason: `withdrawn: the run was cancelled (${reason})` } });
    }
    await tx.$executeRaw`SELECT pg_notify(${RUN_CANCEL_CHANNEL}, ${opts.runId})`;
    return { runId: opts.runId, from: run.status, attemptsCancelled: live.length, approvalsWithdrawn: pending.length };
  });
}
