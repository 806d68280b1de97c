import type { Db, Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import type { CiEvent, PrReviewEvent } from "@/server/domain/ci-events/ci-event";
import { attributeRedCheck, prepareAttribution, storeAttribution, type PreparedAttribution } from "./attribution-decisions";
import { dropDeferredRejection, onRejection, type RejectionOutcome } from "./spawn";

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
  return onRejection(
    tx,
    {
      repositoryId: opts.repositoryId,
      branch: await reviewedBranch(tx, opts),
      pullRequestId: opts.pullRequestId,
      rejectedRunId: null,
      text: event.review.body,
      by: event.actor.login,
      key: reviewKey(opts.repositoryId, event.review.id),
    },
    opts.now,
  );
}

const reviewKey = (repositoryId: string, reviewId: PrReviewEvent["review"]["id"]) => `review:${repositoryId}:${reviewId}`;

/** The PR record's head ref: what Airlock's runs pushed to (a review payload may be stale). */
async function reviewedBranch(tx: Tx, opts: { pullRequestId: string | null; event: PrReviewEvent }): Promise<string> {
  const pr = opts.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: opts.pullRequestId }, select: { headRef: true } }) : null;
  return pr?.headRef ?? opts.event.pullRequest.headRef;
}

/**
 * A review that takes a deferred rejection back (spawn.ts, "deferred rejections"): an approval
 * (the PR's state is now approved) drops whichever is deferred; a dismissal drops only the
 * dismissed review's own rejection. A plain comment changes nothing.
 */
async function supersedeDeferredOnReview(tx: Tx, opts: { repositoryId: string; pullRequestId: string | null; event: PrReviewEvent }): Promise<string> {
  const { state, id } = opts.event.review;
  if (state !== "approved" && state !== "dismissed") return "";
  const branch = await reviewedBranch(tx, opts);
  const dropped = await dropDeferredRejection(tx, { repositoryId: opts.repositoryId, branch, ...(state === "dismissed" ? { key: reviewKey(opts.repositoryId, id) } : {}) });
  return dropped ? `fix-forward: the rejection deferred on ${branch} no longer stands (${opts.event.actor.login}'s review: ${state})` : "";
}

type FailedCheck = Extract<CiEvent, { type: "failed_check" }>;

/** The branch and check name a red check is attributed under. */
function redCheckOf(event: FailedCheck, prHeadRef: string | null | undefined): { branch: string; check: string } | null {
  const branch = prHeadRef ?? event.headBranch;
  // The same name the Pipeline record (and so every observation) carries.
  const check = event.checkName ?? event.workflowName ?? event.jobName ?? "check";
  return branch ? { branch, check } : null;
}

/**
 * Before a delivery's evaluation transaction: the attribution of its red check, so the runs its
 * trigger rules create carry it in their bundle and prompt. Evaluated, not stored: fixLoopOnEvent
 * stores exactly this decision inside the transaction. Null for other events, or no agent activity.
 */
export async function attributionBeforeEvaluation(
  db: Db,
  opts: { event: Exclude<CiEvent, { type: "ignored" }>; repositoryId: string; prHeadRef: string | null | undefined; now: Date },
): Promise<PreparedAttribution | null> {
  if (opts.event.type !== "failed_check") return null;
  const red = redCheckOf(opts.event, opts.prHeadRef);
  return red ? prepareAttribution(db, { repositoryId: opts.repositoryId, ...red, headSha: opts.event.headSha, now: opts.now }) : null;
}

/**
 * The loop's part of a delivery's evaluation, in its transaction: a changes-requested review
 * may start a fix run; a red check on a branch with agent activity is attributed. Returns a
 * note for the delivery's detail ("" when the loop had nothing to say).
 */
export async function fixLoopOnEvent(
  tx: Tx,
  opts: {
    event: Exclude<CiEvent, { type: "ignored" }>;
    repositoryId: string;
    pullRequestId: string | null;
    createdRunIds: string[];
    /** From attributionBeforeEvaluation: what the created runs' bundles carry (stored as is). */
    attribution?: PreparedAttribution | null;
    now: Date;
  },
): Promise<string> {
  const { event } = opts;
  if (event.type === "pr_review") {
    if (event.review.state !== "changes_requested") return supersedeDeferredOnReview(tx, { repositoryId: opts.repositoryId, pullRequestId: opts.pullRequestId, event });
    const outcome = await fixForwardOnReview(tx, { repositoryId: opts.repositoryId, pullRequestId: opts.pullRequestId, event, now: opts.now });
    return `fix-forward: ${outcome.kind === "skipped" || outcome.kind === "deferred" ? outcome.reason : outcome.kind.replace("_", " ")}`;
  }
  if (event.type === "failed_check") {
    if (opts.attribution) {
      const made = await storeAttribution(tx, opts.attribution, opts.createdRunIds);
      return `attribution of ${opts.attribution.entry.check}: ${made.value.replace("_", "-")}`;
    }
    const pr = opts.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: opts.pullRequestId }, select: { headRef: true } }) : null;
    const red = redCheckOf(event, pr?.headRef);
    if (!red) return "";
    const made = await attributeRedCheck(tx, { repositoryId: opts.repositoryId, ...red, headSha: event.headSha, runIds: opts.createdRunIds, now: opts.now });
    return made ? `attribution of ${red.check}: ${made.value.replace("_", "-")}` : "";
  }
  return "";
}
