import type { Tx } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import { enqueue } from "@/server/queue/enqueue";
import { appendRunEvents } from "../events/append";
import { advisoryLock } from "../ingest/evaluate/locks";

// The fix-forward loop's trigger: a rejection (a changes-requested review on the forge, or a
// rejected patch in Airlock's approval UI) of work an agent of ours pushed or proposed on a
// branch. Under the branch's advisory lock it writes at most one spawn INTENT per rejection
// (its dedupe key) and queues the launch; the intent is committed with the rejection itself, so
// a retried or raced evaluation finds it and a launch that then fails still burns an attempt.
// At the bound (`Repository.maxFixAttempts`) it intends an escalation instead, itself bounded.

/** Runs that still work on a branch: no fix run starts beside one (a suggestion is not running). */
export const liveRunStatuses: readonly RunStatus[] = ["queued", "running", "awaiting_approval"];
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
      status: { in: [...liveRunStatuses] },
      ...(r.rejectedRunId ? { id: { not: r.rejectedRunId } } : {}),
    },
    select: { number: true, status: true },
  });
  if (live) return { kind: "skipped", reason: `run #${live.number} is ${live.status.replaceAll("_", " ")} on ${r.branch}` };

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
