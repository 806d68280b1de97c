import type { FixLoopState, Tx } from "@/server/db";
import { enqueue } from "@/server/queue/enqueue";
import { appendRunEvents } from "../events/append";
import { advisoryLock } from "@/server/db/advisory-lock";
import { isOpenRun, openRunStatuses } from "../runs/lifecycle";

// The fix-forward loop's trigger: a rejection (a changes-requested review on the forge, or a
// rejected patch in Airlock's approval UI) of work an agent of ours pushed or proposed on a
// branch. Under the branch's advisory lock it writes at most one spawn INTENT per rejection
// (its dedupe key) and queues the launch; the intent is committed with the rejection itself, so
// a retried or raced evaluation finds it and a launch that then fails still burns an attempt.
// At the bound (`Repository.maxFixAttempts`) it intends an escalation instead, itself bounded.
// Beside an open run (runs/lifecycle.ts isOpenRun: live or awaiting approval) it spawns nothing:
// the rejection is deferred, and taken up when the last open run on the branch ends ("deferred
// rejections" below).

/** How many times an escalation is tried before the loop gives up and logs an error. */
export const maxEscalationTries = 3;

export const fixLoopLockKey = (repositoryId: string, branch: string) => `airlock:fixloop:${repositoryId}:${branch}`;

export type Rejection = {
  repositoryId: string;
  branch: string;
  pullRequestId: string | null;
  /** The run whose patch was rejected (Airlock), or null: the latest run that pushed to the branch. */
  rejectedRunId: string | null;
  /** The rejection text, verbatim. */
  text: string;
  by: string;
  /** One spawn per rejection: "review:<id>", "approval:<id>". */
  key: string;
};

export type RejectionOutcome =
  | { kind: "fix_intended"; intentId: string; attempt: number; bound: number }
  | { kind: "escalation_intended"; intentId: string; attempt: number }
  | { kind: "duplicate"; intentId: string }
  /** A run was live on the branch: the rejection is stored and taken up when the last one ends. */
  | { kind: "deferred"; behindRunId: string; reason: string }
  | { kind: "skipped"; reason: string };

/** The run that authored the branch's agent work: the fix run's parent (stack, model, task). */
async function authoringRun(tx: Tx, r: Rejection): Promise<{ id: string; number: number } | null> {
  if (r.rejectedRunId) return tx.agentDispatchRun.findUnique({ where: { id: r.rejectedRunId }, select: { id: true, number: true } });
  return tx.agentDispatchRun.findFirst({
    where: {
      repositoryId: r.repositoryId,
      OR: [{ headBranch: r.branch }, ...(r.pullRequestId ? [{ pullRequestId: r.pullRequestId }] : [])],
      writeBacks: { some: { outcome: "succeeded", kind: { in: ["push_commits", "update_pr_branch", "open_pr"] } } },
    },
    orderBy: { createdAt: "desc" },
    select: { id: true, number: true },
  });
}

/** Intents of `kind` that count against the bound: every attempted spawn since the last re-open. */
export async function countIntents(tx: Tx, opts: { repositoryId: string; branch: string; kind: "fix" | "escalate"; since: Date | null }) {
  return tx.fixSpawnIntent.count({
    where: { repositoryId: opts.repositoryId, branch: opts.branch, kind: opts.kind, ...(opts.since ? { createdAt: { gt: opts.since } } : {}) },
  });
}

export async function onRejection(tx: Tx, r: Rejection, now: Date): Promise<RejectionOutcome> {
  await advisoryLock(tx, fixLoopLockKey(r.repositoryId, r.branch));
  const dedupeKey = `fix:${r.key}`;
  const existing = await tx.fixSpawnIntent.findUnique({ where: { dedupeKey }, select: { id: true } });
  if (existing) return { kind: "duplicate", intentId: existing.id };

  const state = await tx.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: r.repositoryId, branch: r.branch } } });
  if (state?.escalatedAt) return { kind: "skipped", reason: `${r.branch} was escalated to a person; only a maintainer can re-open it for agents` };

  const author = await authoringRun(tx, r);
  if (!author) return { kind: "skipped", reason: `no agent run of Airlock pushed to ${r.branch}` };

  const live = await tx.agentDispatchRun.findFirst({
    where: {
      repositoryId: r.repositoryId,
      OR: [{ headBranch: r.branch }, ...(r.pullRequestId ? [{ pullRequestId: r.pullRequestId }] : [])],
      status: { in: [...openRunStatuses] },
      ...(r.rejectedRunId ? { id: { not: r.rejectedRunId } } : {}),
    },
    select: { id: true, number: true, status: true },
  });
  if (live) {
    await deferRejection(tx, r, live.id, now);
    return { kind: "deferred", behindRunId: live.id, reason: `run #${live.number} is ${live.status.replaceAll("_", " ")} on ${r.branch}; the rejection waits until it ends` };
  }
  // Acted on from here: an earlier deferred rejection is superseded by this later one.
  await clearDeferral(tx, r.repositoryId, r.branch);

  const repo = await tx.repository.findUniqueOrThrow({ where: { id: r.repositoryId }, select: { maxFixAttempts: true } });
  const spawned = await countIntents(tx, { repositoryId: r.repositoryId, branch: r.branch, kind: "fix", since: state?.resetAt ?? null });
  if (spawned >= repo.maxFixAttempts) return intendEscalation(tx, { ...r, authoringRunId: author.id, resetAt: state?.resetAt ?? null }, now);

  const intent = await tx.fixSpawnIntent.create({
    data: {
      repositoryId: r.repositoryId,
      branch: r.branch,
      kind: "fix",
      pullRequestId: r.pullRequestId,
      dedupeKey,
      rejection: r.text,
      rejectedBy: r.by,
      parentRunId: author.id,
      createdAt: now,
    },
    select: { id: true },
  });
  await enqueue(tx, "fixloop.launch", { intentId: intent.id }, { jobKey: `fixloop:${intent.id}` });
  await appendRunEvents({
    db: tx,
    runId: author.id,
    events: [{ type: "log", payload: { stream: "system", text: `${r.by} requested changes; fix run ${spawned + 1} of ${repo.maxFixAttempts} is starting on ${r.branch}` } }],
  });
  return { kind: "fix_intended", intentId: intent.id, attempt: spawned + 1, bound: repo.maxFixAttempts };
}

/** At the bound: one escalation intent (each try is one), unless escalated or out of tries. */
export async function intendEscalation(
  tx: Tx,
  r: Rejection & { authoringRunId: string; resetAt: Date | null },
  now: Date,
): Promise<RejectionOutcome> {
  const tries = await countIntents(tx, { repositoryId: r.repositoryId, branch: r.branch, kind: "escalate", since: r.resetAt });
  if (tries >= maxEscalationTries) return { kind: "skipped", reason: `escalation of ${r.branch} gave up after ${tries} tries` };
  // The reset time is in the key: each re-open gets its own escalation tries.
  const dedupeKey = `escalate:${r.repositoryId}:${r.branch}:${r.resetAt?.getTime() ?? 0}:${tries + 1}`;
  const existing = await tx.fixSpawnIntent.findUnique({ where: { dedupeKey }, select: { id: true } });
  if (existing) return { kind: "duplicate", intentId: existing.id };
  const intent = await tx.fixSpawnIntent.create({
    data: {
      repositoryId: r.repositoryId,
      branch: r.branch,
      kind: "escalate",
      pullRequestId: r.pullRequestId,
      dedupeKey,
      rejection: r.text,
      rejectedBy: r.by,
      parentRunId: r.authoringRunId,
      createdAt: now,
    },
    select: { id: true },
  });
  await enqueue(tx, "fixloop.escalate", { intentId: intent.id }, { jobKey: `fixloop:${intent.id}` });
  return { kind: "escalation_intended", intentId: intent.id, attempt: tries + 1 };
}

// ---------------------------------------------------------------- deferred rejections
//
// A rejection that arrives while a run is live on the branch starts no fix run beside it; it is
// stored on the branch's FixLoopState (in the transaction that skips it) and taken up when the
// last live run ends: a poller over forge state would see "changes requested, no live run" on its
// next tick, and this is that tick, driven by the run's end. Only the latest rejection is kept.
//
// Whether it still stands when the run ends is decided by these signals, each recorded when it
// happens (so the order is the commit order, with no clocks to compare):
// - a later approving review on the forge, or the dismissal of the deferred review itself
//   (triggers.ts): the latest review is the PR's state, and it is no longer "changes requested";
// - a fix run's patch was pushed and it asked for review again (review-again.ts), which includes
//   the live run being that fix run: the next validation round supersedes the rejection;
// - checked when the run ends: the PR is no longer open (merged or closed).
// Everything else (the escalation, another live run, the bound, the dedupe key) is onRejection's
// own check, so a deferred rejection is treated exactly like one that arrives at that moment.

const noDeferral = {
  deferredKey: null,
  deferredText: null,
  deferredBy: null,
  deferredRejectedRunId: null,
  deferredPullRequestId: null,
  deferredAt: null,
  deferredBehindRunId: null,
} as const;

async function deferRejection(tx: Tx, r: Rejection, behindRunId: string, now: Date) {
  // A failed launch tries its (older) rejection again (launch.ts, key "<key>~relaunch"): that
  // never displaces a rejection already waiting, which is later and spawns in its place.
  if (r.key.endsWith("~relaunch")) {
    const waiting = await tx.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: r.repositoryId, branch: r.branch } }, select: { deferredKey: true } });
    if (waiting?.deferredKey) return;
  }
  const fields = {
    deferredKey: r.key,
    deferredText: r.text,
    deferredBy: r.by,
    deferredRejectedRunId: r.rejectedRunId,
    deferredPullRequestId: r.pullRequestId,
    deferredAt: now,
    deferredBehindRunId: behindRunId,
  };
  await tx.fixLoopState.upsert({
    where: { repositoryId_branch: { repositoryId: r.repositoryId, branch: r.branch } },
    create: { repositoryId: r.repositoryId, branch: r.branch, pullRequestId: r.pullRequestId, ...fields },
    update: fields,
  });
}

function clearDeferral(tx: Tx, repositoryId: string, branch: string) {
  return tx.fixLoopState.updateMany({ where: { repositoryId, branch, deferredKey: { not: null } }, data: noDeferral });
}

/** The rejection a branch's loop state keeps for later, if any. */
export function deferredRejectionOf(state: FixLoopState | null): (Rejection & { at: Date; behindRunId: string | null }) | null {
  if (!state?.deferredKey) return null;
  return {
    repositoryId: state.repositoryId,
    branch: state.branch,
    pullRequestId: state.deferredPullRequestId,
    rejectedRunId: state.deferredRejectedRunId,
    text: state.deferredText ?? "",
    by: state.deferredBy ?? "",
    key: state.deferredKey,
    at: state.deferredAt ?? state.updatedAt,
    behindRunId: state.deferredBehindRunId,
  };
}

/**
 * A signal that the deferred rejection no longer stands (see above). No advisory lock: the
 * update's row lock orders it against a deferral or a take-up, and callers (a write-back's
 * record transaction) may hold run rows that the lock's holder wants. `key`: only that rejection.
 */
export async function dropDeferredRejection(tx: Tx, opts: { repositoryId: string; branch: string; key?: string }): Promise<boolean> {
  const dropped = await tx.fixLoopState.updateMany({
    where: { repositoryId: opts.repositoryId, branch: opts.branch, deferredKey: opts.key ?? { not: null } },
    data: noDeferral,
  });
  return dropped.count > 0;
}

/**
 * The reaction to a run's ending: the `run.ended` job (enqueued by runs/transition.ts in the
 * transaction that writes the end) calls this, so a rejection deferred on the run's branch is
 * taken up through onRejection. Raced endings of two
 * runs on the branch serialise on the branch lock; the first sees the other still live and
 * defers again, the second spawns; a retried call finds nothing stored, and the dedupe key
 * would refuse a second intent anyway. Returns what was done per deferred rejection.
 */
export async function afterRunEnded(tx: Tx, runId: string, now: Date): Promise<RejectionOutcome[]> {
  const run = await tx.agentDispatchRun.findUnique({
    where: { id: runId },
    select: { repositoryId: true, status: true, headBranch: true, pullRequestId: true, pullRequest: { select: { headRef: true } } },
  });
  if (!run || isOpenRun(run.status)) return [];
  const branches = [run.headBranch, run.pullRequest?.headRef].filter((b): b is string => !!b);
  const waiting = await tx.fixLoopState.findMany({
    where: {
      repositoryId: run.repositoryId,
      deferredKey: { not: null },
      OR: [{ branch: { in: branches } }, ...(run.pullRequestId ? [{ deferredPullRequestId: run.pullRequestId }] : [])],
    },
    select: { branch: true },
    orderBy: { branch: "asc" },
  });
  const outcomes: RejectionOutcome[] = [];
  for (const { branch } of waiting) {
    await advisoryLock(tx, fixLoopLockKey(run.repositoryId, branch));
    // Read again under the lock: a raced ending may have taken it up meanwhile.
    const state = await tx.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: run.repositoryId, branch } } });
    const deferred = deferredRejectionOf(state);
    if (!deferred) continue;
    await clearDeferral(tx, run.repositoryId, branch);
    const pr = deferred.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: deferred.pullRequestId }, select: { number: true, state: true } }) : null;
    if (pr && pr.state !== "open") {
      outcomes.push({ kind: "skipped", reason: `PR #${pr.number} is ${pr.state}: ${deferred.by}'s rejection no longer asks for a fix` });
      continue;
    }
    const { at: _at, behindRunId: _behind, ...rejection } = deferred;
    outcomes.push(await onRejection(tx, rejection, now));
  }
  return outcomes;
}
