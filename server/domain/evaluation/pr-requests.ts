// What a person's request on a pull request does besides dispatching: "@agent cancel" cancels
// the PR's live runs (when the commenter may), and a refused request is noted on the PR's
// latest live run so whoever watches it sees who asked and why nothing happened.
import type { Tx } from "@/server/db";
import { appendRunEvents } from "@/server/domain/events/append";
import { cancelRun } from "@/server/domain/run-engine/cancel";
import { canCancelRun, cancellableRunStatuses } from "@/server/domain/runs/lifecycle";
import type { PrCommentEvent } from "@/server/domain/ci-events/ci-event";
import { permissionFor } from "./dispatch";
import type { DropLedger } from "./drops";

export type CancelOutcome = { cancelled: number[]; refused: string | null };

export async function applyCancelCommand(opts: {
  tx: Tx;
  event: PrCommentEvent;
  pullRequestId: string | null;
  actorUserId: string | null;
  drops: DropLedger;
  now: Date;
}): Promise<CancelOutcome> {
  const { tx, event } = opts;
  const permission = permissionFor(event);
  if (!permission.allowed) {
    const reason = `cancel refused: ${event.actor.login} may not cancel runs: ${permission.reason}`;
    await opts.drops.record("cancel", [{ reason }]);
    if (opts.pullRequestId) await noteOnLatestLiveRun(tx, opts.pullRequestId, reason);
    return { cancelled: [], refused: reason };
  }
  if (!opts.pullRequestId) return { cancelled: [], refused: null };
  const runs = await tx.agentDispatchRun.findMany({
    where: { pullRequestId: opts.pullRequestId, status: { in: [...cancellableRunStatuses] } },
    orderBy: { createdAt: "asc" },
    select: { id: true, number: true, status: true },
  });
  const cancelled: number[] = [];
  for (const run of runs) {
    if (!canCancelRun(run.status).ok) continue;
    await cancelRun({
      db: tx,
      actor: { userId: opts.actorUserId, label: event.actor.login },
      runId: run.id,
      reason: `Cancelled by ${event.actor.login} (${event.handle} cancel on #${event.pullRequest.number})`,
      now: opts.now,
    });
    cancelled.push(run.number);
  }
  return { cancelled, refused: null };
}

/** A refused dispatch is recorded as a drop by the caller; this shows it on the live run. */
export async function noteOnLatestLiveRun(tx: Tx, pullRequestId: string, reason: string): Promise<void> {
  const run = await tx.agentDispatchRun.findFirst({
    where: { pullRequestId, status: { in: [...cancellableRunStatuses] } },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  if (!run) return;
  await appendRunEvents({ db: tx, runId: run.id, events: [{ type: "dispatch_skipped", payload: { reason: reason.slice(0, 2000) } }] });
}
