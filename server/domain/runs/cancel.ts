import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import type { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { appendRunEvents } from "../events/append";
import { afterRunEnded } from "../fixloop/spawn";
import { assertAttemptTransition, assertRunTransition, canCancelRun, isActiveAttempt } from "./lifecycle";

/** Workers LISTEN here to stop the adapter session of a cancelled run. */
export const RUN_CANCEL_CHANNEL = "airlock_run_cancel";

/**
 * Cancels a run: the run and its live attempt become `cancelled`, with an audit
 * entry and a status event, in one transaction. The row lock makes concurrent
 * cancels (or a cancel racing a status change) take effect once; the loser is
 * told why. The worker running the attempt hears it through NOTIFY at commit.
 */
export async function cancelRun(opts: { db: Db; actor: AuditActor; runId: string; reason?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  const reason = opts.reason?.trim() || `Cancelled by ${opts.actor.label}`;
  return transaction(opts.db, "cancelRun", async (tx) => {
    const [run] = await tx.$queryRaw<{ status: RunStatus; repositoryId: string }[]>`
      SELECT "status", "repositoryId" FROM "AgentDispatchRun" WHERE "id" = ${opts.runId} FOR UPDATE`;
    if (!run) throw new AppError("NOT_FOUND", "No such run.");
    const verdict = canCancelRun(run.status);
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_cancel" });
    assertRunTransition(run.status, "cancelled");

    const attempts = await tx.dispatchAttempt.findMany({
      where: { runId: opts.runId },
      select: { id: true, number: true, status: true },
    });
    const live = attempts.filter((a) => isActiveAttempt(a.status));
    for (const a of live) {
      assertAttemptTransition(a.status, "cancelled");
      await tx.dispatchAttempt.update({
        where: { id: a.id },
        data: { status: "cancelled" satisfies AttemptStatus, finishedAt: now, exitReason: reason },
      });
    }
    await tx.agentDispatchRun.update({ where: { id: opts.runId }, data: { status: "cancelled", finishedAt: now } });
    await appendRunEvents({
      db: tx,
      runId: opts.runId,
      events: [
        ...live.map((a) => ({
          type: "status" as const,
          payload: { scope: "attempt" as const, attemptNumber: a.number, from: a.status, to: "cancelled" as const, reason },
        })),
        { type: "status", payload: { scope: "run", from: run.status, to: "cancelled", reason } },
      ],
    });
    await afterRunEnded(tx, opts.runId, now);
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.cancel",
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: run.repositoryId,
      detail: { from: run.status, reason, attemptsCancelled: live.map((a) => a.number) },
    });
    await tx.$executeRaw`SELECT pg_notify(${RUN_CANCEL_CHANNEL}, ${opts.runId})`;
    return { runId: opts.runId, from: run.status, attemptsCancelled: live.length };
  });
}
