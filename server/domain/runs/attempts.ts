import type { Db, Prisma, Tx } from "@/server/db";
import type { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { appendRunEvents } from "../events/append";
import type { RunEventInput } from "../events/catalogue";
import { zStackSpec } from "../stacks/spec";
import type { AttemptLaunch } from "./schemas";
import { type AttemptFence, withFence } from "./attempt-fence";
import { type AttemptEndCause, automaticRetry } from "./lifecycle";
import { queueAttempt, transitionAttempt, transitionRun } from "./transition";

// The attempt steps every path shares: mark one running, fail its start, and lose it (retrying
// within the stack's bound). Each is a state change through transition.ts in the caller's
// transaction; the queue job that starts the next attempt is added in the same transaction, so
// it exists exactly when the change commits.

const dispatchJobKey = (runId: string) => `run.dispatch:${runId}`;

/** Adds the job that admits and starts the run's next queued attempt (deduplicated per run). */
export function enqueueDispatch(db: Db, runId: string, runAt?: Date) {
  return enqueue(db, "run.dispatch", { runId }, { jobKey: dispatchJobKey(runId), runAt, maxAttempts: 25 });
}

/** Retries the stack allows after the first attempt (limits.maxRetries; 0 when the snapshot has no spec). */
export function maxRetriesOf(stackSnapshot: unknown): number {
  const spec = zStackSpec.safeParse((stackSnapshot as { spec?: unknown } | null)?.spec);
  return spec.success ? spec.data.limits.maxRetries : 0;
}

/** starting -> running once the agent session exists; the run follows (queued -> running). */
export function markAttemptRunning(opts: { db: Db; fence: AttemptFence; sessionId: string; workspacePath?: string | null; launchRecord?: AttemptLaunch | null; now?: Date }) {
  const now = opts.now ?? new Date();
  return withFence(opts.db, "markAttemptRunning", opts.fence, async (tx, attempt) => {
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.fence.runId }, select: { status: true } });
    const events: RunEventInput[] = [];
    await transitionAttempt(tx, {
      runId: opts.fence.runId,
      attempt: { id: opts.fence.attemptId, ...attempt },
      to: "running",
      reason: "the agent session started",
      now,
      data: { startedAt: now, heartbeatAt: now, adapterSessionId: opts.sessionId, workspacePath: opts.workspacePath ?? null },
      events,
    });
    // What the agent was started with, in the same transaction (not a status: no transition).
    if (opts.launchRecord) await tx.dispatchAttempt.update({ where: { id: opts.fence.attemptId }, data: { launchRecord: opts.launchRecord as Prisma.InputJsonValue } });
    if (run.status === "queued") {
      await transitionRun(tx, { runId: opts.fence.runId, from: "queued", to: "running", reason: `attempt ${attempt.number} started`, now, attemptId: opts.fence.attemptId, before: events });
      return;
    }
    if (run.status !== "running") {
      throw new AppError("CONFLICT", `The run is ${run.status}; attempt ${attempt.number} cannot start.`, { reason: "illegal_transition" });
    }
    await appendRunEvents({ db: tx, runId: opts.fence.runId, attemptId: opts.fence.attemptId, events });
  });
}

/**
 * Ends an attempt that could not start (workspace, adapter, pod). A transient failure (the
 * machine or cluster was briefly unable) is retried within the stack's bound; anything else is a
 * configuration problem a person should see, so the run fails with the reason (Retry is one
 * click away).
 */
export function failAttemptStart(opts: { db: Db; fence: AttemptFence; reason: string; transient?: boolean; now?: Date }) {
  const now = opts.now ?? new Date();
  return withFence(opts.db, "failAttemptStart", opts.fence, async (tx, attempt) => {
    const events: RunEventInput[] = [];
    await transitionAttempt(tx, { runId: opts.fence.runId, attempt: { id: opts.fence.attemptId, ...attempt }, to: "failed", reason: opts.reason, now, events });
    return retryOrEnd(tx, {
      runId: opts.fence.runId,
      attempt: { id: opts.fence.attemptId, number: attempt.number },
      cause: opts.transient ? "start_failed_transient" : "start_failed",
      events,
      what: `could not start: ${opts.reason}`,
      now,
    });
  });
}

export type LoseOutcome = { retried: true; nextAttempt: number } | { retried: false; runStatus: RunStatus };

/**
 * The run's side of an attempt that ended without success (its own status is already written,
 * its status event is first in `events`): a new attempt is queued when automaticRetry allows it
 * (the run goes back to queued), else the run fails. A run no longer in flight (cancelled, or
 * ended by someone else) keeps its status. The caller holds the run row lock.
 */
export async function retryOrEnd(
  tx: Tx,
  opts: { runId: string; attempt: { id: string; number: number }; cause: AttemptEndCause; events: RunEventInput[]; what: string; now: Date },
): Promise<LoseOutcome> {
  const { attempt, events, now } = opts;
  const run = await tx.agentDispatchRun.findUniqueOrThrow({
    where: { id: opts.runId },
    select: { status: true, stackSnapshot: true, _count: { select: { attempts: true } } },
  });
  const maxRetries = maxRetriesOf(run.stackSnapshot);
  const verdict = automaticRetry({ cause: opts.cause, runStatus: run.status, attempts: run._count.attempts, maxRetries });
  if (run.status !== "queued" && run.status !== "running") {
    await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events });
    return { retried: false, runStatus: run.status };
  }
  if (verdict.retry) {
    if (run.status === "running") {
      await transitionRun(tx, { runId: opts.runId, from: "running", to: "queued", reason: `attempt ${attempt.number} ${opts.what}; ${verdict.reason}`, now, attemptId: attempt.id, before: events });
    } else {
      await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events });
    }
    const next = await queueAttempt(tx, { runId: opts.runId, reason: `${verdict.reason}: attempt ${attempt.number} ${opts.what}`, now });
    await enqueueDispatch(tx, opts.runId);
    return { retried: true, nextAttempt: next.number };
  }
  await transitionRun(tx, { runId: opts.runId, from: run.status, to: "failed", reason: `attempt ${attempt.number} ${opts.what}; not retried: ${verdict.reason}`, now, attemptId: attempt.id, before: events });
  return { retried: false, runStatus: "failed" };
}

/**
 * Marks an active attempt `lost` and, within the stack's retry bound, queues the next attempt
 * (the run goes back to queued); past the bound the run fails. The caller holds the run row lock
 * and has checked the attempt is still active. Used by the reaper (silent attempts) and by a
 * worker that shuts down while holding attempts.
 */
export async function loseAttempt(
  tx: Tx,
  opts: { runId: string; attempt: { id: string; number: number; status: AttemptStatus }; reason: string; now: Date },
): Promise<LoseOutcome> {
  const { attempt, now } = opts;
  const events: RunEventInput[] = [];
  await transitionAttempt(tx, { runId: opts.runId, attempt, to: "lost", reason: opts.reason, now, events });
  return retryOrEnd(tx, { runId: opts.runId, attempt, cause: "lost", events, what: "was lost", now });
}

/** A worker giving up an attempt it holds (shutdown): lose it now rather than after the lease. */
export function releaseAttempt(opts: { db: Db; fence: AttemptFence; reason: string; now?: Date }) {
  return withFence(opts.db, "releaseAttempt", opts.fence, (tx, attempt) =>
    loseAttempt(tx, { runId: opts.fence.runId, attempt: { id: opts.fence.attemptId, ...attempt }, reason: opts.reason, now: opts.now ?? new Date() }),
  );
}
