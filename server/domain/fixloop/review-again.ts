import type { Db, Tx } from "@/server/db";
import type { Forge } from "@/server/forges/types";
import { enqueue } from "@/server/queue/enqueue";
import { appendRunEvents } from "../events/append";
import { dropDeferredRejection } from "./spawn";

// A fix run ends by asking for review again, which starts the next validation round: once its
// patch is pushed (the write-back succeeded), "fixloop.review" asks the forge. On GitHub the
// reviewer who requested changes is asked again; a rejection made in Airlock's approval UI has
// no GitHub reviewer (the patch's approval was that review). The local forge marks its PR record.

const patchKinds = new Set(["push_commits", "update_pr_branch"]);

/** In the write-back's record transaction: a fix run's pushed patch queues the review request, once. */
export async function askForReviewAgainAfterPush(tx: Tx, opts: { runId: string; writeBackId: string; kind: string }): Promise<boolean> {
  if (!patchKinds.has(opts.kind)) return false;
  const intent = await tx.fixSpawnIntent.findFirst({ where: { runId: opts.runId, kind: "fix" }, select: { id: true, repositoryId: true, branch: true } });
  if (!intent) return false;
  await enqueue(tx, "fixloop.review", { intentId: intent.id }, { jobKey: `fixloop-review:${opts.writeBackId}`, maxAttempts: 5 });
  // The next validation round starts: a rejection deferred on the branch (of the round before,
  // made while this fix run was live) no longer stands; the reviewers see the new head.
  await dropDeferredRejection(tx, { repositoryId: intent.repositoryId, branch: intent.branch });
  return true;
}

/** Whom to ask: the forge reviewer whose changes-requested review started this fix run. */
export function reviewersOf(intent: { dedupeKey: string; rejectedBy: string }): string[] {
  return intent.dedupeKey.startsWith("fix:review:") ? [intent.rejectedBy] : [];
}

export type ReviewAgainResult = { kind: "requested"; detail: string } | { kind: "skipped"; reason: string };

export async function requestReviewAgain(opts: { db: Db; forgeFor: (repository: { fullName: string; forge: string }) => Forge; intentId: string }): Promise<ReviewAgainResult> {
  const intent = await opts.db.fixSpawnIntent.findUnique({ where: { id: opts.intentId } });
  if (!intent?.runId || !intent.pullRequestId) return { kind: "skipped", reason: "no fix run on a pull request" };
  const pr = await opts.db.pullRequest.findUnique({ where: { id: intent.pullRequestId }, select: { number: true, repository: { select: { fullName: true, forge: true } } } });
  if (!pr) return { kind: "skipped", reason: "the pull request is gone" };
  const reviewers = reviewersOf(intent);
  if (pr.repository.forge === "github" && reviewers.length === 0) {
    return { kind: "skipped", reason: "the rejection was made in Airlock: the fix's patch approval was its review" };
  }
  const { detail } = await opts.forgeFor(pr.repository).requestReview(pr.repository.fullName, pr.number, reviewers);
  await appendRunEvents({ db: opts.db, runId: intent.runId, events: [{ type: "log", payload: { stream: "system", text: `asked for review again: ${detail}` } }] });
  return { kind: "requested", detail };
}
