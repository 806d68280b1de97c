import type { Prisma, Tx } from "@/server/db";
import type { ApprovalStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { type AuditActor, recordAudit } from "../audit";
import { appendRunEvents } from "../events/append";
import type { RunEventInput } from "../events/catalogue";

// The approval lifecycle and its one write path. Every status change of an ApprovalRequest goes
// through transitionApproval, inside the caller's transaction: the edge is checked against the
// table below, the row updated (guarded on the status it moves from), the run's event and the
// audit row written, and an `approval.decided` job enqueued (the outbox): settling the run
// (settle-run.ts) reacts to that job in queue/tasks rather than being called by each use case.

type TransitionTable<S extends string> = Readonly<Record<S, Readonly<Partial<Record<S, string>>>>>;

/** Legal approval transitions, `from -> to -> why`. Anything not listed is illegal. */
export const approvalTransitions: TransitionTable<ApprovalStatus> = {
  pending: {
    approved: "a maintainer approved what they were shown; its write-back is queued",
    rejected: "a maintainer rejected it, with a reason",
    expired: "it expired before a decision, went stale (the artifact or target head moved), or was withdrawn",
  },
  approved: {
    executed: "its write-back reached the forge, or the attempt it approved launched with exactly what it showed",
    failed: "its write-back failed to execute, or what the approved attempt would launch with changed (stale)",
  },
  failed: {
    approved: "a maintainer retried its failed write-back (same row, same idempotency key)",
  },
  executed: {},
  rejected: {},
  expired: {},
};

export function canTransitionApproval(from: ApprovalStatus, to: ApprovalStatus): boolean {
  return approvalTransitions[from]?.[to] !== undefined;
}

/** Throws AppError(CONFLICT, reason "illegal_transition") unless from -> to is listed. */
export function assertApprovalTransition(from: ApprovalStatus, to: ApprovalStatus): void {
  if (canTransitionApproval(from, to)) return;
  const legal = Object.keys(approvalTransitions[from]);
  const options = legal.length > 0 ? `it can only become ${legal.join(", ")}` : `${from} is final`;
  throw new AppError("CONFLICT", `Cannot move approval from ${from} to ${to}: ${options}`, {
    reason: "illegal_transition",
    details: { kind: "approval", from, to, legal },
  });
}

/** Locks the approval row (FOR UPDATE): decisions on one request serialise on it. NOT_FOUND when absent. */
export async function lockApprovalRow(tx: Tx, approvalId: string): Promise<void> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "ApprovalRequest" WHERE "id" = ${approvalId} FOR UPDATE`;
  if (locked.length === 0) throw new AppError("NOT_FOUND", "No such approval request.");
}

export type ApprovalAudit = { actor: AuditActor; action: string; repositoryId: string; detail?: Prisma.InputJsonValue };

/**
 * Moves an approval `from -> to`. Guarded on `from`: when the row is no longer in it (a raced
 * decision the caller did not lock against) nothing is written and false is returned.
 * `data` carries who decided, when and why; `events` are appended to the run's log.
 */
export async function transitionApproval(
  tx: Tx,
  opts: {
    approval: { id: string; runId: string; status: ApprovalStatus };
    to: ApprovalStatus;
    data?: { decidedAt?: Date; decidedById?: string | null; reason?: string };
    events?: RunEventInput[];
    audit?: ApprovalAudit;
  },
): Promise<boolean> {
  const { approval, to } = opts;
  assertApprovalTransition(approval.status, to);
  const moved = await tx.approvalRequest.updateMany({ where: { id: approval.id, status: approval.status }, data: { status: to, ...opts.data } });
  if (moved.count === 0) return false;
  if (opts.events?.length) await appendRunEvents({ db: tx, runId: approval.runId, events: opts.events });
  if (opts.audit) {
    await recordAudit(tx, {
      actor: opts.audit.actor,
      action: opts.audit.action,
      objectType: "ApprovalRequest",
      objectId: approval.id,
      repositoryId: opts.audit.repositoryId,
      detail: opts.audit.detail,
    });
  }
  await enqueueSettle(tx, { runId: approval.runId, approvalId: approval.id, status: to });
  return true;
}

/**
 * The job that settles the run once nothing is left open; also enqueued for a write-back that
 * has no approval (a repository exception) when its outcome is recorded.
 */
export function enqueueSettle(tx: Tx, payload: { runId: string; approvalId?: string; status?: string }) {
  return enqueue(tx, "approval.decided", payload, { maxAttempts: 25 });
}
