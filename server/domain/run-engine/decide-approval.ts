import type { Db, Prisma, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { repositoryRole, roleAtLeast } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import { auditActorOf, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import { appendRunEvents } from "../events/append";
import { twoPersonRefusal } from "../runs/causers";
import { fixForwardOnApprovalRejection } from "../fixloop/triggers";
import { approvePrivileged, endRejectedLaunch } from "../approvals/privileged-capability";
import { assertPushAllowed } from "../approvals/push-protection";
import { writeBackExtraOf } from "../approvals/presented";
import { acceptReleaseGap } from "../approvals/release-gaps";
import { createPendingWriteBack } from "../approvals/request-write-back";
import { lockApprovalRow, transitionApproval } from "../approvals/transition";
import type { BranchHead } from "@/server/forges/local/repositories";
import { utcMinute } from "@/server/lib/time";

// The rules of the gate. Each decision runs in one transaction holding the approval's row lock,
// so two people deciding at once get exactly one outcome and the other is told why:
//  - only a maintainer or admin of the repository decides;
//  - with the repository's two-person rule on, no one who caused the run's work (its actor, whoever
//    dispatched, retried, resumed or forked it, wrote its continuation prompt or attached context,
//    and the causers of the runs it continues: server/domain/runs/causers.ts) approves its
//    write-backs;
//  - an approval binds what the approver saw: the artifact digest and head SHA the client sends
//    must be the request's, and the request's must still be current (artifact unchanged, PR or
//    branch head unmoved); otherwise it is refused as stale and, when the world moved, a new
//    request replaces it;
//  - an expired request is refused and marked expired.
// Approving records the WriteBack row (outcome pending, with its idempotency key) and queues its
// execution in the same transaction; every decision writes an audit entry. Status changes go
// through transition.ts; the run settles (succeeded, escalated...) in the `approval.decided` job
// each change enqueues, so a rejection's response no longer carries the run's new status.

async function lockApproval(tx: Tx, approvalId: string) {
  await lockApprovalRow(tx, approvalId);
  return tx.approvalRequest.findUniqueOrThrow({
    where: { id: approvalId },
    include: {
      run: { include: { repository: { select: { id: true, fullName: true, twoPersonRule: true } } } },
      artifact: { select: { digest: true, attemptId: true, kind: true, secretFindings: true } },
      decidedBy: { select: { email: true } },
    },
  });
}
type LockedApproval = Awaited<ReturnType<typeof lockApproval>>;

async function requireDecider(tx: Tx, actor: UserActor | null, approval: LockedApproval): Promise<UserActor> {
  if (!actor) throw new AppError("UNAUTHORIZED", "Sign in to decide an approval.", { reason: "unauthenticated" });
  const role = await repositoryRole(tx, actor, approval.run.repositoryId);
  if (!roleAtLeast(role, "maintainer")) {
    throw new AppError("FORBIDDEN", role === null ? "You have no role on this repository." : `Deciding an approval needs the maintainer role; you are ${role}.`, {
      reason: "repository_role",
      details: { required: "maintainer", role },
    });
  }
  return actor;
}

function requirePending(approval: LockedApproval) {
  if (approval.status !== "pending") {
    const by = approval.decidedBy?.email ? ` by ${approval.decidedBy.email}` : "";
    throw new AppError("CONFLICT", `This approval was already ${approval.status}${by}.`, { reason: "already_decided", details: { status: approval.status } });
  }
}

type Refusal = { refused: AppError };

async function expireIfDue(tx: Tx, approval: LockedApproval, actor: UserActor, now: Date): Promise<Refusal | null> {
  if (approval.expiresAt > now) return null;
  await transitionApproval(tx, {
    approval,
    to: "expired",
    data: { decidedAt: now, reason: "expired before a decision" },
    audit: { actor: auditActorOf(actor), action: "approval.expire", repositoryId: approval.run.repositoryId, detail: { expiresAt: approval.expiresAt.toISOString() } },
  });
  return { refused: new AppError("PRECONDITION_FAILED", `This approval expired at ${utcMinute(approval.expiresAt)}.`, { reason: "expired" }) };
}

async function currentHead(tx: Tx, approval: LockedApproval, branchHead?: BranchHead): Promise<string | null> {
  if (approval.targetPrNumber !== null) {
    const pr = await tx.pullRequest.findUnique({ where: { repositoryId_number: { repositoryId: approval.run.repositoryId, number: approval.targetPrNumber } }, select: { headSha: true } });
    if (pr && pr.headSha !== approval.targetHeadSha) return pr.headSha;
  }
  if (approval.targetBranch && branchHead) return branchHead(approval.run.repository.fullName, approval.targetBranch);
  return null;
}

/** The world moved since the request: it is marked stale (expired) and a new pending request replaces it. */
async function supersede(tx: Tx, approval: LockedApproval, actor: UserActor, change: { headSha: string | null; artifactDigest: string | null; why: string }, now: Date): Promise<Refusal> {
  const presented = (approval.presented ?? {}) as Record<string, unknown>;
  const target = { ...((presented.target as object | undefined) ?? {}), headSha: change.headSha ?? approval.targetHeadSha };
  const artifact = presented.artifact && typeof presented.artifact === "object" ? { ...(presented.artifact as object), digest: change.artifactDigest ?? approval.artifactDigest } : presented.artifact;
  await transitionApproval(tx, { approval, to: "expired", data: { decidedAt: now, decidedById: actor.id, reason: `stale: ${change.why}` } });
  const ttl = approval.expiresAt.getTime() - approval.createdAt.getTime();
  const next = await tx.approvalRequest.create({
    data: {
      runId: approval.runId,
      action: approval.action,
      targetBranch: approval.targetBranch,
      targetPrNumber: approval.targetPrNumber,
      targetCheck: approval.targetCheck,
      targetHeadSha: change.headSha ?? approval.targetHeadSha,
      artifactId: approval.artifactId,
      artifactDigest: change.artifactDigest ?? approval.artifactDigest,
      presented: { ...presented, target, artifact, supersedes: approval.id } as Prisma.InputJsonValue,
      status: "pending",
      policyDecisionId: approval.policyDecisionId,
      expiresAt: new Date(now.getTime() + Math.max(ttl, 60_000)),
      createdAt: now,
    },
  });
  await appendRunEvents({
    db: tx,
    runId: approval.runId,
    events: [
      {
        type: "approval_requested",
        payload: {
          approvalId: next.id,
          action: next.action,
          target: { branch: next.targetBranch ?? undefined, prNumber: next.targetPrNumber ?? undefined, check: next.targetCheck ?? undefined, headSha: next.targetHeadSha ?? undefined },
          ...(next.artifactId && next.artifactDigest ? { artifactId: next.artifactId, artifactDigest: next.artifactDigest } : {}),
          reason: `Replaces ${approval.id}, which went stale: ${change.why}`,
          expiresAt: next.expiresAt.toISOString(),
        },
      },
    ],
  });
  await recordAudit(tx, { actor: auditActorOf(actor), action: "approval.stale", objectType: "ApprovalRequest", objectId: approval.id, repositoryId: approval.run.repositoryId, detail: { why: change.why, newApprovalId: next.id } });
  return { refused: new AppError("PRECONDITION_FAILED", `This approval is stale: ${change.why}. A new request (${next.id}) replaces it.`, { reason: "stale", details: { newApprovalId: next.id } }) };
}

export type ApproveOptions = {
  db: Db;
  actor: UserActor | null;
  approvalId: string;
  /** The artifact digest and head SHA the approver was shown. */
  artifactDigest: string | null;
  headSha: string | null;
  branchHead?: BranchHead;
  now?: Date;
};

/** Approves a write-back: its WriteBack row is recorded and its execution queued. */
export async function approveWriteBack(opts: ApproveOptions): Promise<{ approvalId: string; writeBackId: string }> {
  const result = await approveApproval({ ...opts, kinds: "write_back" });
  if (result.writeBackId === null) throw new AppError("INTERNAL", "a write-back approval recorded no write-back");
  return { approvalId: result.approvalId, writeBackId: result.writeBackId };
}

/**
 * Approves any request: a write-back (writeBackId names its WriteBack) or a privileged launch
 * (writeBackId null: the run is re-queued and launches exactly what was approved).
 */
export async function approveApproval(opts: ApproveOptions & { kinds?: "any" | "write_back" }): Promise<{ approvalId: string; writeBackId: string | null }> {
  const now = opts.now ?? new Date();
  const result = await transaction(opts.db, "approveWriteBack", async (tx): Promise<Refusal | { approvalId: string; writeBackId: string | null }> => {
    const approval = await lockApproval(tx, opts.approvalId);
    const actor = await requireDecider(tx, opts.actor, approval);
    if ((approval.action === "privileged_capability" || approval.action === "release_gap") && opts.kinds === "write_back") {
      throw new AppError("BAD_REQUEST", `This request is for ${approval.action === "release_gap" ? "a release's readiness gap" : "a privileged launch"}, not a write-back.`, { reason: "invalid_write_back" });
    }
    requirePending(approval);
    const expired = await expireIfDue(tx, approval, actor, now);
    if (expired) return expired;
    assertPushAllowed(approval);
    const { run } = approval;
    const twoPerson = await twoPersonRefusal(tx, { run, twoPersonRule: run.repository.twoPersonRule, userId: actor.id });
    if (twoPerson) throw new AppError("FORBIDDEN", twoPerson.message, { reason: "two_person_rule", details: { causes: twoPerson.causes } });
    if (approval.action === "privileged_capability") {
      // Bound to the digest of what will launch, checked against the run as it is now.
      return approvePrivileged(tx, { approval: { ...approval, status: "pending" }, actor, now });
    }
    // Accepting a gap writes nothing to a forge: bound to the commit the approver was shown.
    if (approval.action === "release_gap") return acceptReleaseGap(tx, { approval: { ...approval, status: "pending" }, actor, headSha: opts.headSha, now });
    if ((approval.artifactDigest ?? null) !== (opts.artifactDigest ?? null) || (approval.targetHeadSha !== null && approval.targetHeadSha !== opts.headSha)) {
      throw new AppError("PRECONDITION_FAILED", "This approval is stale: what you reviewed is not what this request is for. Reload and review again.", { reason: "stale" });
    }
    if (approval.artifact && approval.artifact.digest !== approval.artifactDigest && approval.action === "publish_release") {
      // A release's notes name the artifact's digest: a changed artifact is stale, asked for again, never swapped in.
      await transitionApproval(tx, { approval, to: "expired", data: { decidedAt: now, decidedById: actor.id, reason: "stale: the artifact changed" } });
      return { refused: new AppError("PRECONDITION_FAILED", "This release is stale: the artifact changed since it was requested. Nothing is published; ask to publish again.", { reason: "stale" }) };
    }
    if (approval.artifact && approval.artifact.digest !== approval.artifactDigest) {
      return supersede(tx, approval, actor, { headSha: null, artifactDigest: approval.artifact.digest, why: "the artifact changed" }, now);
    }
    const head = await currentHead(tx, approval, opts.branchHead);
    if (head && approval.targetHeadSha && head !== approval.targetHeadSha) {
      return supersede(tx, approval, actor, { headSha: head, artifactDigest: null, why: `the target head moved from ${approval.targetHeadSha.slice(0, 12)} to ${head.slice(0, 12)}` }, now);
    }

    await transitionApproval(tx, { approval, to: "approved", data: { decidedById: actor.id, decidedAt: now } });
    const presented = (approval.presented ?? {}) as { message?: string | null; labels?: unknown; target?: object };
    const writeBack = await createPendingWriteBack(tx, {
      run,
      kind: approval.action,
      approvalId: approval.id,
      attemptId: approval.artifact?.attemptId ?? null,
      approvedBy: actor.email,
      artifactDigest: approval.artifactDigest,
      target: {
        repository: run.repository.fullName,
        branch: approval.targetBranch,
        prNumber: approval.targetPrNumber,
        check: approval.targetCheck,
        headSha: approval.targetHeadSha,
        message: presented.message ?? null,
        // The label change the approver was shown is the one executed.
        ...(approval.action === "set_labels" ? { labels: presented.labels ?? null } : {}),
        // What the kind carries beyond its target (a review's event, a rerun's plan, open_pr's
        // PR...), as the approver saw it.
        ...writeBackExtraOf(presented),
      },
      now,
    });
    await appendRunEvents({ db: tx, runId: run.id, events: [{ type: "log", payload: { stream: "system", text: `${actor.email} approved ${approval.action.replaceAll("_", " ")} (${approval.id}); executing write-back ${writeBack.id}` } }] });
    await recordAudit(tx, {
      actor: auditActorOf(actor),
      action: "approval.approve",
      objectType: "ApprovalRequest",
      objectId: approval.id,
      repositoryId: run.repositoryId,
      detail: { runId: run.id, action: approval.action, artifactDigest: approval.artifactDigest, headSha: approval.targetHeadSha, writeBackId: writeBack.id },
    });
    return { approvalId: approval.id, writeBackId: writeBack.id };
  });
  if ("refused" in result) throw result.refused;
  return result;
}

export async function rejectWriteBack(opts: { db: Db; actor: UserActor | null; approvalId: string; reason: string; now?: Date }): Promise<{ approvalId: string }> {
  const now = opts.now ?? new Date();
  const reason = opts.reason.trim();
  const result = await transaction(opts.db, "rejectWriteBack", async (tx): Promise<Refusal | { approvalId: string }> => {
    const approval = await lockApproval(tx, opts.approvalId);
    const actor = await requireDecider(tx, opts.actor, approval);
    if (!reason) throw new AppError("BAD_REQUEST", "A rejection needs a reason.", { reason: "reason_required" });
    requirePending(approval);
    const expired = await expireIfDue(tx, approval, actor, now);
    if (expired) return expired;
    await transitionApproval(tx, {
      approval,
      to: "rejected",
      data: { decidedById: actor.id, decidedAt: now, reason },
      events: [{ type: "log", payload: { stream: "system", text: `${actor.email} rejected ${approval.action.replaceAll("_", " ")} (${approval.id}): ${reason}` } }],
      audit: { actor: auditActorOf(actor), action: "approval.reject", repositoryId: approval.run.repositoryId, detail: { runId: approval.runId, action: approval.action, reason } },
    });
    // A rejected privileged launch ends its run with the reason; nothing ran, so nothing is fixed forward.
    if (approval.action === "privileged_capability") await endRejectedLaunch(tx, { approval, by: actor.email, reason, now });
    // A rejected gap leaves the release unpublished (publish-release.ts); there is nothing to fix forward.
    else if (approval.action !== "release_gap") await fixForwardOnApprovalRejection(tx, { approval, reason, by: actor.email, now });
    return { approvalId: approval.id };
  });
  if ("refused" in result) throw result.refused;
  return result;
}
