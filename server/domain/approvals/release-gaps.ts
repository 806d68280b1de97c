import type { Db, Prisma, Tx } from "@/server/db";
import { AppError } from "@/server/errors";
import type { ReleaseGap } from "@/server/domain/triggers/release-keys";
import { auditActorOf, type UserActor } from "../actor";
import { appendRunEvents } from "../events/append";
import { contextLabelsOf, type PresentedRun, presentedOf } from "./presented";
import { defaultApprovalTtlMs } from "./request-write-back";
import { type PresentedReleaseGap, zPresentedReleaseGap } from "./schemas";
import { transitionApproval } from "./transition";

// A release review's readiness gaps (triggers/release-keys.ts releaseGaps: a missing artifact, a
// checksum that does not match, a version out of line, a checksum Airlock could not check) are
// approval items, one per gap, made with the run in the evaluation's transaction. A person
// accepts each (approve: nothing is written to a forge; the request ends approved) or rejects it;
// publishing the release (writebacks/publish-release.ts) is refused until every gap is accepted.
// Idempotent: a gap already asked about on the run (by its id) is not asked again.

type GapRun = Pick<PresentedRun, "id" | "prompt" | "promptHash" | "contextDigest" | "contextBundle" | "stackSnapshot" | "stackDigest" | "repository"> & { headSha: string };

const gapOf = (presented: Prisma.JsonValue): PresentedReleaseGap | null => {
  const parsed = zPresentedReleaseGap.safeParse((presented as { releaseGap?: unknown } | null)?.releaseGap);
  return parsed.success ? parsed.data : null;
};

/** The run's release_gap approvals with the gap each is about. */
export async function releaseGapApprovals(tx: Db | Tx, runId: string) {
  const rows = await tx.approvalRequest.findMany({ where: { runId, action: "release_gap" }, orderBy: { createdAt: "asc" }, select: { id: true, status: true, presented: true } });
  return rows.map((r) => ({ id: r.id, status: r.status, gap: gapOf(r.presented) }));
}

export async function requestReleaseGapApprovals(
  tx: Tx,
  opts: { run: GapRun; gaps: readonly ReleaseGap[]; tag: string; version: string; ruleName: string; now: Date },
): Promise<string[]> {
  if (opts.gaps.length === 0) return [];
  const { run, now } = opts;
  const asked = new Set((await releaseGapApprovals(tx, run.id)).flatMap((a) => (a.gap ? [a.gap.id] : [])));
  const contextLabels = await contextLabelsOf(tx, run);
  const expiresAt = new Date(now.getTime() + defaultApprovalTtlMs);
  const ids: string[] = [];
  for (const gap of opts.gaps) {
    if (asked.has(gap.id)) continue;
    asked.add(gap.id);
    const releaseGap: PresentedReleaseGap = { ...gap, tag: opts.tag.slice(0, 255), version: opts.version.slice(0, 100), commitSha: run.headSha, ruleName: opts.ruleName.slice(0, 300) };
    const reason = `Readiness gap in ${releaseGap.tag}: ${gap.detail} Approving accepts it for publishing; ${releaseGap.tag} is published only once every gap is accepted.`;
    const target = { branch: releaseGap.tag, headSha: run.headSha };
    const presented = presentedOf({ run, contextLabels, admission: null, action: "release_gap", target, artifact: null, message: null, reason, exception: null, extra: { releaseGap } });
    const approval = await tx.approvalRequest.create({
      data: { runId: run.id, action: "release_gap", targetBranch: target.branch, targetHeadSha: run.headSha, presented: presented as Prisma.InputJsonValue, status: "pending", expiresAt, createdAt: now },
      select: { id: true },
    });
    ids.push(approval.id);
    await appendRunEvents({
      db: tx,
      runId: run.id,
      events: [{ type: "approval_requested", payload: { approvalId: approval.id, action: "release_gap", target, reason: reason.slice(0, 2000), expiresAt: expiresAt.toISOString() } }],
    });
  }
  return ids;
}

/**
 * Accepts a pending release_gap (the caller checked the decider, the two-person rule and holds
 * the approval's lock). Bound to the commit the approver was shown: another one is stale.
 */
export async function acceptReleaseGap(
  tx: Tx,
  opts: { approval: { id: string; runId: string; status: "pending"; targetHeadSha: string | null; presented: Prisma.JsonValue; run: { repositoryId: string } }; actor: UserActor; headSha: string | null; now: Date },
): Promise<{ approvalId: string; writeBackId: null }> {
  const { approval, now } = opts;
  const gap = gapOf(approval.presented);
  if (!gap) throw new AppError("UNPROCESSABLE", "This approval does not name the readiness gap it accepts; it cannot be approved.", { reason: "invalid_presented" });
  if (approval.targetHeadSha !== opts.headSha) {
    throw new AppError("PRECONDITION_FAILED", "This approval is stale: what you reviewed is not what this request is for. Reload and review again.", { reason: "stale" });
  }
  const actor = auditActorOf(opts.actor);
  await transitionApproval(tx, {
    approval,
    to: "approved",
    data: { decidedById: opts.actor.id, decidedAt: now },
    events: [{ type: "log", payload: { stream: "system", text: `${actor.label} accepted the readiness gap of ${gap.tag} (${approval.id}): ${gap.detail}`.slice(0, 4000) } }],
    audit: { actor, action: "approval.approve", repositoryId: approval.run.repositoryId, detail: { runId: approval.runId, action: "release_gap", gap: gap.id, tag: gap.tag, commitSha: gap.commitSha } },
  });
  return { approvalId: approval.id, writeBackId: null };
}

/** Why the run's release may not be published yet because of its gaps (null: every gap accepted). */
export async function openGapRefusal(tx: Db | Tx, runId: string): Promise<string | null> {
  const gaps = await releaseGapApprovals(tx, runId);
  const refused = gaps.find((g) => g.status === "rejected" || g.status === "expired" || g.status === "failed");
  if (refused) return `A readiness gap was ${refused.status}: ${refused.gap?.detail ?? refused.id}. This release is not published.`;
  const open = gaps.filter((g) => g.status === "pending");
  if (open.length > 0) return `${open.length} readiness gap${open.length === 1 ? "" : "s"} wait${open.length === 1 ? "s" : ""} for a person to accept ${open.length === 1 ? "it" : "them"} (${open.map((g) => g.id).join(", ")}).`;
  return null;
}
