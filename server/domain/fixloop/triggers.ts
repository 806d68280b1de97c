import type { Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import type { CiEvent, PrReviewEvent } from "../ingest/ci-event";
import { attributeRedCheck } from "./attribution-decisions";
import { onRejection, type RejectionOutcome } from "./spawn";

// The two ways a rejection reaches the loop; each is one call at its hook point, inside the
// transaction that records the rejection, so the spawn intent commits (or not) with it.

const patchWriteBacks = new Set<WriteBackKind>(["push_commits", "update_pr_branch"]);

/** A maintainer rejected an agent's patch in Airlock's approval UI, with a reason. */
export async function fixForwardOnApprovalRejection(
  tx: Tx,
  opts: { approval: { id: string; action: WriteBackKind; targetBranch: string | null; run: { id: string; repositoryId: string; pullRequestId: string | null; headBranch: string | null } }; reason: string; by: string; now: Date },
): Promise<RejectionOutcome> {
  const { approval } = opts;
  if (!patchWriteBacks.has(approval.action)) return { kind: "skipped", reason: `a rejected ${approval.action.replaceAll("_", " ")} is not a code change` };
  const branch = approval.targetBranch ?? approval.run.headBranch;
  if (!branch) return { kind: "skipped", reason: "the rejected patch names no branch" };
  return onRejection(
    tx,
    { repositoryId: approval.run.repositoryId, branch, pullRequestId: approval.run.pullRequestId, rejectedRunId: approval.run.id, text: opts.reason, by: opts.by, key: `approval:${approval.id}` },
    opts.now,
  );
}

/** A changes-requested review on the forge (a person's or a bot's). */
export async function fixForwardOnReview(tx: Tx, opts: { repositoryId: string; pullRequestId: string | null; event: PrReviewEvent; now: Date }): Promise<RejectionOutcome> {
  const { event } = opts;
  if (event.review.state !== "changes_requested") return { kind: "skipped", reason: `a ${event.review.state} review asks for no fix` };
  // The PR record's head ref: what Airlock's runs pushed to (a review payload may be stale).
  const pr = opts.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: opts.pullRequestId }, select: { headRef: true } }) : null;
  return onRejection(
    tx,
    {
      repositoryId: opts.repositoryId,
      branch: pr?.headRef ?? event.pullRequest.headRef,
      pullRequestId: opts.pullRequestId,
      rejectedRunId: null,
      text: event.review.body,
      by: event.actor.login,
      key: `review:${opts.repositoryId}:${event.review.id}`,
    },
    opts.now,
  );
}

/**
 * The loop's part of a delivery's evaluation, in its transaction: a changes-requested review
 * may start a fix run; a red check on a branch with agent activity is attributed. Returns a
 * note for the delivery's detail ("" when the loop had nothing to say).
 */
export async function fixLoopOnEvent(
  tx: Tx,
  opts: { event: Exclude<CiEvent, { type: "ignored" }>; repositoryId: string; pullRequestId: string | null; createdRunIds: string[]; now: Date },
): Promise<string> {
  const { event } = opts;
  if (event.type === "pr_review") {
    if (event.review.state !== "changes_requested") return "";
    const outcome = await fixForwardOnReview(tx, { repositoryId: opts.repositoryId, pullRequestId: opts.pullRequestId, event, now: opts.now });
    return `fix-forward: ${outcome.kind === "skipped" ? outcome.reason : outcome.kind.replace("_", " ")}`;
  }
  if (event.type === "failed_check") {
    const pr = opts.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: opts.pullRequestId }, select: { headRef: true } }) : null;
    const branch = pr?.headRef ?? event.headBranch;
    // The same name the Pipeline record (and so every observation) carries.
    const check = event.checkName ?? event.workflowName ?? event.jobName ?? "check";
    if (!branch) return "";
    const made = await attributeRedCheck(tx, { repositoryId: opts.repositoryId, branch, check, headSha: event.headSha, runIds: opts.createdRunIds, now: opts.now });
    return made ? `attribution of ${check}: ${made.value.replace("_", "-")}` : "";
  }
  return "";
}
