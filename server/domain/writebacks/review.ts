import { z } from "zod";
import type { Db, RepoRole, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { ArtifactKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { type AuditActor, recordAudit } from "../audit";
import { requestWriteBack, type RequestWriteBackResult } from "../approvals/request-write-back";
import type { ReviewEvent } from "../approvals/schemas";
import { inertSummary, maxSummaryChars } from "../inert-text";
import { lockRunOrThrow } from "../runs/transition";

// The review write-back: the run's findings posted as a review of its pull request, commenting
// or requesting changes (a `review` write-back) or approving it (`approve_review`, which the
// change gate never exempts). Asked for by a maintainer ("Post review" on the run page); the
// change gate decides whether a person approves, and a fork's or an unplaced run's review always
// waits for one (untrusted_origin_needs_approval). The body is built here and nowhere else, from
// the run's newest diagnosis or report, made inert like the diagnosis comment; the approval
// screen shows it and its event byte for byte, and exactly that is posted.

export const zReviewChoice = z.enum(["comment", "request_changes", "approve"]);
export type ReviewChoice = z.infer<typeof zReviewChoice>;

export const reviewEventOf: Record<ReviewChoice, ReviewEvent> = { comment: "COMMENT", request_changes: "REQUEST_CHANGES", approve: "APPROVE" };

const verdictLine: Record<ReviewEvent, string> = {
  COMMENT: "comments",
  REQUEST_CHANGES: "requests changes",
  APPROVE: "approves these changes",
};

/** Artifacts a review can carry, in the order preferred. */
const reviewable: readonly ArtifactKind[] = ["diagnosis", "report"];

/** The exact review body (the forge appends only its hidden write-back marker line). */
export function reviewBody(opts: { runNumber: number; event: ReviewEvent; artifactKind: string; artifactDigest: string; text: string }): string {
  const { text, cut } = inertSummary(opts.text);
  return [
    `**Airlock review** (run #${opts.runNumber}): ${verdictLine[opts.event]}`,
    "",
    text || `_The ${opts.artifactKind} is empty._`,
    "",
    ...(cut ? [`_Cut at ${maxSummaryChars.toLocaleString("en")} characters; the whole ${opts.artifactKind} is on the run page._`, ""] : []),
    `<sub>Written by an agent and posted by Airlock after a maintainer's request · ${opts.artifactKind} ${opts.artifactDigest}</sub>`,
  ].join("\n");
}

type RunForReview = { id: string; status: string; pullRequest: { number: number } | null };

/** Why the run has no review to ask for (null: it may be asked for). */
export function reviewRefusal(run: Pick<RunForReview, "status" | "pullRequest">, hasFindings: boolean): string | null {
  if (!run.pullRequest) return "The run has no pull request to review.";
  if (run.status !== "succeeded" && run.status !== "awaiting_approval") return "A review is posted once the run has produced its findings (succeeded or awaiting approval).";
  if (!hasFindings) return "The run produced no diagnosis or report to review with.";
  return null;
}

/** An earlier review request of this run that still stands. */
async function openReviewOf(db: Db | Tx, runId: string): Promise<string | null> {
  const kinds = ["review", "approve_review"] as const;
  const [approval, writeBack] = await Promise.all([
    db.approvalRequest.findFirst({ where: { runId, action: { in: [...kinds] }, status: { in: ["pending", "approved", "executed"] } }, select: { id: true, status: true } }),
    db.writeBack.findFirst({ where: { runId, kind: { in: [...kinds] }, outcome: { in: ["pending", "succeeded"] } }, select: { id: true, outcome: true } }),
  ]);
  if (writeBack) return `write-back ${writeBack.id} ${writeBack.outcome}`;
  if (approval) return `approval ${approval.id} ${approval.status}`;
  return null;
}

const findingsOf = (db: Db | Tx, runId: string) =>
  db.artifact.findMany({ where: { runId, kind: { in: [...reviewable] }, content: { not: null } }, orderBy: { createdAt: "desc" }, select: { id: true, kind: true, digest: true, content: true } });

/** The newest diagnosis, else the newest report. */
function pickFindings<T extends { kind: string }>(rows: T[]): T | null {
  for (const kind of reviewable) {
    const hit = rows.find((r) => r.kind === kind);
    if (hit) return hit;
  }
  return null;
}

/** The verdict the run page shows beside "Post review". */
export async function reviewControl(db: Db, opts: { run: RunForReview; role: RepoRole }): Promise<{ allowed: boolean; reason: string | null }> {
  if (!opts.run.pullRequest) return { allowed: false, reason: reviewRefusal(opts.run, true) };
  const [findings, open] = await Promise.all([findingsOf(db, opts.run.id), openReviewOf(db, opts.run.id)]);
  const refusal =
    reviewRefusal(opts.run, findings.length > 0) ?? (open ? `Already asked for (${open}).` : null) ?? (opts.role === "viewer" ? "Asking for a review needs the maintainer role." : null);
  return { allowed: refusal === null, reason: refusal };
}

/**
 * Asks the change gate for a review of the run's PR by a person (`role` is theirs on the run's
 * repository). The run row is locked, so a double click makes one request.
 */
export function requestReview(opts: { db: Db; runId: string; by: AuditActor; role: RepoRole; choice: ReviewChoice; now?: Date }): Promise<RequestWriteBackResult> {
  if (opts.role === "viewer") throw new AppError("FORBIDDEN", "Asking for a review needs the maintainer role.", { reason: "repository_role" });
  const now = opts.now ?? new Date();
  const event = reviewEventOf[opts.choice];
  return transaction(opts.db, "requestReview", async (tx) => {
    await lockRunOrThrow(tx, opts.runId);
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: { id: true, number: true, status: true, repositoryId: true, pullRequest: { select: { number: true } } } });
    const findings = pickFindings(await findingsOf(tx, run.id));
    const refusal = reviewRefusal(run, Boolean(findings));
    if (refusal || !findings?.content || !run.pullRequest) throw new AppError("PRECONDITION_FAILED", refusal ?? "The run has nothing to review with.", { reason: "no_review" });
    const open = await openReviewOf(tx, run.id);
    if (open) throw new AppError("CONFLICT", `This run's review was already asked for (${open}).`, { reason: "already_requested" });
    const message = reviewBody({ runNumber: run.number, event, artifactKind: findings.kind, artifactDigest: findings.digest, text: findings.content });
    const asked = await requestWriteBack({
      db: tx,
      runId: run.id,
      action: event === "APPROVE" ? "approve_review" : "review",
      target: { prNumber: run.pullRequest.number },
      artifactId: findings.id,
      message,
      extra: { review: { event } },
      now,
    });
    await recordAudit(tx, {
      actor: opts.by,
      action: "writeback.request",
      objectType: "AgentDispatchRun",
      objectId: run.id,
      repositoryId: run.repositoryId,
      detail: { action: event === "APPROVE" ? "approve_review" : "review", event, prNumber: run.pullRequest.number, artifactDigest: findings.digest, ...(asked.kind === "approval" ? { approvalId: asked.approvalId } : { writeBackId: asked.writeBackId }) },
    });
    return asked;
  });
}
