import type { Tx } from "@/server/db";
import type { Db } from "@/server/db";
import type { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { appendRunEvents } from "../events/append";
import { afterRunEnded } from "../fixloop/spawn";
import type { RunEventInput } from "../events/catalogue";
import { zStackSpec } from "../stacks/spec";
import { type AttemptFence, withFence } from "./attempt-fence";
import { assertAttemptTransition, assertRunTransition } from "./lifecycle";
import { type AttemptEndCause, automaticRetry } from "./retry";

// The attempt steps every path shares: queue a new attempt (first run, retry, lost attempt),
// mark one running, fail its start, and lose it (retrying within the stack's bound). Each is a
// state change plus its status events in the caller's transaction; the queue job that starts the
// next attempt is added in the same transaction, so it exists exactly when the change commits.

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

/**
 * Inserts the run's next attempt, `queued`, with a fencing token above every earlier attempt's,
 * and its queue and status events (appended now, or pushed onto `deferEvents`). The caller holds
 * the run row lock.
 */
export async function queueAttempt(
  tx: Tx,
  opts: {
    runId: string;
    reason: string;
    now: Date;
    deferEvents?: RunEventInput[];
    /** The run's attempts, when the caller read them all under the run lock (saves a query). */
    attempts?: { number: number; fencingToken: number }[];
  },
) {
  const [last] = opts.attempts
    ? [{ number: Math.max(0, ...opts.attempts.map((a) => a.number)), token: Math.max(0, ...opts.attempts.map((a) => a.fencingToken)) }]
    : await tx.$queryRaw<{ number: number; token: number }[]>`
        SELECT coalesce(max("number"), 0)::int AS "number", coalesce(max("fencingToken"), 0)::int AS "token"
        FROM "DispatchAttempt" WHERE "runId" = ${opts.runId}`;
  const number = (last?.number ?? 0) + 1;
  const attempt = await tx.dispatchAttempt.create({
    data: { runId: opts.runId, number, status: "queued", fencingToken: (last?.token ?? 0) + 1, queuedAt: opts.now },
  });
  const events: RunEventInput[] = [
    { type: "queue", payload: { phase: "queued", attemptNumber: number } },
    { type: "status", payload: { scope: "attempt", attemptNumber: number, from: null, to: "queued", reason: opts.reason } },
  ];
  // A caller that appends more events in the same transaction takes these along (one append).
  if (opts.deferEvents) opts.deferEvents.push(...events);
  else await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events });
  return attempt;
}

export function runStatusEvent(from: RunStatus, to: RunStatus, reason: string): RunEventInput {
  assertRunTransition(from, to);
  return { type: "status", payload: { scope: "run", from, to, reason } };
}

export function attemptStatusEvent(number: number, from: AttemptStatus, to: AttemptStatus, reason: string): RunEventInput {
  assertAttemptTransition(from, to);
  return { type: "status", payload: { scope: "attempt", attemptNumber: number, from, to, reason } };
}

/** starting -> running once the agent session exists; the run follows (queued -> running). */
export function markAttemptRunning(opts: { db: Db; fence: AttemptFence; sessionId: string; workspacePath?: string | null; now?: Date }) {
  const now = opts.now ?? new Date();
  return withFence(opts.db, "markAttemptRunning", opts.fence, async (tx, attempt) => {
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.fence.runId }, select: { status: true } });
    const events = [attemptStatusEvent(attempt.number, attempt.status, "running", "the agent session started")];
    await tx.dispatchAttempt.update({
      where: { id: opts.fence.attemptId },
      data: { status: "running", startedAt: now, heartbeatAt: now, adapterSessionId: opts.sessionId, workspacePath: opts.workspacePath ?? null },
    });
    if (run.status === "queued") {
      events.push(runStatusEvent("queued", "running", `attempt ${attempt.number} started`));
      await tx.agentDispatchRun.update({ where: { id: opts.fence.runId }, data: { status: "running", startedAt: now } });
    } else if (run.status !== "running") {
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
    const events = [attemptStatusEvent(attempt.number, attempt.status, "failed", opts.reason)];
    await tx.dispatchAttempt.update({
      where: { id: opts.fence.attemptId },
      data: { status: "failed", finishedAt: now, exitReason: opts.reason },
    });
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
      events.push(runStatusEvent("running", "queued", `attempt ${attempt.number} ${opts.what}; ${verdict.reason}`));
      await tx.agentDispatchRun.update({ where: { id: opts.runId }, data: { status: "queued" } });
    }
    await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events });
    const next = await queueAttempt(tx, { runId: opts.runId, reason: `${verdict.reason}: attempt ${attempt.number} ${opts.what}`, now });
    await enqueueDispatch(tx, opts.runId);
    return { retried: true, nextAttempt: next.number };
  }
  events.push(runStatusEvent(run.status, "failed", `attempt ${attempt.number} ${opts.what}; not retried: ${verdict.reason}`));
  await tx.agentDispatchRun.update({ where: { id: opts.runId }, data: { status: "failed", finishedAt: now } });
  await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events });
  await afterRunEnded(tx, opts.runId, now);
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
  const events: RunEventInput[] = [attemptStatusEvent(attempt.number, attempt.status, "lost", opts.reason)];
  await tx.dispatchAttempt.update({ where: { id: attempt.id }, data: { status: "lost", finishedAt: now, exitReason: opts.reason } });
  return retryOrEnd(tx, { runId: opts.runId, attempt, cause: "lost", events, what: "was lost", now });
}

/** A worker giving up an attempt it holds (shutdown): lose it now rather than after the lease. */
export function releaseAttempt(opts: { db: Db; fence: AttemptFence; reason: string; now?: Date }) {
  return withFence(opts.db, "releaseAttempt", opts.fence, (tx, attempt) =>
    loseAttempt(tx, { runId: opts.fence.runId, attempt: { id: opts.fence.attemptId, ...attempt }, reason: opts.reason, now: opts.now ?? new Date() }),
  );
}
