import { Prisma, type Tx } from "@/server/db";
import type { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { followRunOnGithub } from "@/server/domain/check-runs/surface";
import { type AuditActor, recordAudit } from "../audit";
import { appendRunEvents } from "../events/append";
import type { RunEventInput } from "../events/catalogue";
import { assertAttemptTransition, assertRunTransition, isTerminalRun } from "./lifecycle";

// The one write path of the run and attempt lifecycles. Every status change of a run or an
// attempt goes through here, inside the caller's transaction: the edge is checked against
// lifecycle.ts, the row is updated (guarded on the status it moves from), the status event is
// appended and, for a person's action, the audit row written. A run that ends enqueues a
// `run.ended` job in the same transaction (the outbox): the areas that react to an ending
// (the fix loop) do so in queue/tasks, not in each use case that ends a run.
// status-writes.test.ts fails on a status write anywhere else.

export type LockedRun = { status: RunStatus; repositoryId: string; admission: Prisma.JsonValue | null };

/**
 * Locks the run row (FOR UPDATE) and returns its status: the lock every run or attempt status
 * change, fenced attempt write and run-scoped use case takes first, so they serialise per run.
 * `admission` is read only when asked for (the claim path; it can be large).
 */
export async function lockRun(tx: Tx, runId: string, opts: { admission?: boolean } = {}): Promise<LockedRun | null> {
  const admission = opts.admission ? Prisma.sql`"admission"` : Prisma.sql`NULL::jsonb AS "admission"`;
  const [row] = await tx.$queryRaw<LockedRun[]>`
    SELECT "status", "repositoryId", ${admission} FROM "AgentDispatchRun" WHERE "id" = ${runId} FOR UPDATE`;
  return row ?? null;
}

/** lockRun, or NOT_FOUND. */
export async function lockRunOrThrow(tx: Tx, runId: string, opts: { admission?: boolean } = {}): Promise<LockedRun> {
  const run = await lockRun(tx, runId, opts);
  if (!run) throw new AppError("NOT_FOUND", "No such run.");
  return run;
}

export function runStatusEvent(from: RunStatus, to: RunStatus, reason: string): RunEventInput {
  assertRunTransition(from, to);
  return { type: "status", payload: { scope: "run", from, to, reason } };
}

export function attemptStatusEvent(number: number, from: AttemptStatus, to: AttemptStatus, reason: string): RunEventInput {
  assertAttemptTransition(from, to);
  return { type: "status", payload: { scope: "attempt", attemptNumber: number, from, to, reason } };
}

/** What a run's timestamps become with its status: started when it runs, finished when it ends. */
function runTimes(to: RunStatus, now: Date): { startedAt?: Date; finishedAt?: Date | null } {
  if (isTerminalRun(to)) return { finishedAt: now };
  if (to === "running") return { startedAt: now };
  if (to === "queued") return { finishedAt: null };
  return {};
}

export type RunAudit = { actor: AuditActor; action: string; repositoryId: string; detail?: Prisma.InputJsonValue };

/**
 * Moves a run `from -> to` (the caller holds the run lock and read `from` under it). Events
 * `before` the run's status event (its attempts' status events, admission) and `after` it are
 * appended with it in one append. A terminal `to` enqueues `run.ended`.
 */
export async function transitionRun(
  tx: Tx,
  opts: {
    runId: string;
    from: RunStatus;
    to: RunStatus;
    reason: string;
    now: Date;
    attemptId?: string;
    before?: RunEventInput[];
    after?: RunEventInput[];
    audit?: RunAudit;
  },
): Promise<void> {
  const event = runStatusEvent(opts.from, opts.to, opts.reason);
  const moved = await tx.agentDispatchRun.updateMany({
    where: { id: opts.runId, status: opts.from },
    data: { status: opts.to, ...runTimes(opts.to, opts.now) },
  });
  if (moved.count !== 1) {
    throw new AppError("CONFLICT", `The run is no longer ${opts.from.replaceAll("_", " ")}.`, { reason: "illegal_transition", details: { from: opts.from, to: opts.to } });
  }
  await appendRunEvents({ db: tx, runId: opts.runId, attemptId: opts.attemptId, events: [...(opts.before ?? []), event, ...(opts.after ?? [])] });
  if (opts.audit) {
    await recordAudit(tx, {
      actor: opts.audit.actor,
      action: opts.audit.action,
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: opts.audit.repositoryId,
      detail: opts.audit.detail,
    });
  }
  if (isTerminalRun(opts.to)) await enqueue(tx, "run.ended", { runId: opts.runId, status: opts.to }, { maxAttempts: 25 });
  // The run's check run on GitHub, when it has one, follows the status (check-runs/surface.ts).
  await followRunOnGithub(tx, opts.runId);
}

export type AttemptRef = { id: string; number: number; status: AttemptStatus };

/**
 * Moves an attempt `from -> to` (the caller holds its run's lock). An ending records
 * finishedAt and the reason as its exit reason; `data` adds what the edge carries (the session
 * of a started attempt). The status event is pushed onto `events` when given (the caller
 * appends it with others, in order), else appended now.
 */
export async function transitionAttempt(
  tx: Tx,
  opts: {
    runId: string;
    attempt: AttemptRef;
    to: AttemptStatus;
    reason: string;
    now: Date;
    data?: { startedAt?: Date; heartbeatAt?: Date; adapterSessionId?: string; workspacePath?: string | null };
    events?: RunEventInput[];
  },
): Promise<RunEventInput> {
  const { attempt, to, now } = opts;
  const event = attemptStatusEvent(attempt.number, attempt.status, to, opts.reason);
  const ends = to !== "starting" && to !== "running";
  const moved = await tx.dispatchAttempt.updateMany({
    where: { id: attempt.id, status: attempt.status },
    data: { status: to, ...(ends ? { finishedAt: now, exitReason: opts.reason } : {}), ...opts.data },
  });
  if (moved.count !== 1) {
    throw new AppError("CONFLICT", `Attempt ${attempt.number} is no longer ${attempt.status}.`, { reason: "illegal_transition", details: { from: attempt.status, to } });
  }
  if (opts.events) opts.events.push(event);
  else await appendRunEvents({ db: tx, runId: opts.runId, attemptId: attempt.id, events: [event] });
  return event;
}

/**
 * Inserts the run's next attempt, `queued` (its entry into the attempt lifecycle), with a
 * fencing token above every earlier attempt's, and its queue and status events (appended now,
 * or pushed onto `deferEvents`). The caller holds the run lock.
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

/**
 * queued -> starting on a pool, if the pool has a free slot: the count of its active attempts
 * and the claim are one statement (the caller holds the pool's lock, so no other claimer's slot
 * is missing from the count). Returns the status event for the caller to append on success.
 */
export async function startAttemptInPool(
  tx: Tx,
  opts: {
    attempt: { id: string; number: number };
    pool: { id: string; name: string; concurrency: number };
    workerRef: string;
    runtimeServiceAccount: string | null;
    runnerServiceAccount: string | null;
    now: Date;
  },
): Promise<{ claimed: boolean; busy: number; event: RunEventInput }> {
  const { attempt, pool, now } = opts;
  const event = attemptStatusEvent(attempt.number, "queued", "starting", `a worker picked the attempt on pool ${pool.name} and is preparing its workspace`);
  const [slot] = await tx.$queryRaw<{ busy: number; claimed: number }[]>`
    WITH busy AS (
      SELECT count(*)::int AS n FROM "DispatchAttempt" WHERE "runnerPoolId" = ${pool.id} AND "status" IN ('starting', 'running')
    ), claimed AS (
      UPDATE "DispatchAttempt"
      SET "status" = 'starting', "runnerRef" = ${opts.workerRef}, "heartbeatAt" = ${now}, "runnerPoolId" = ${pool.id},
          "runtimeServiceAccount" = ${opts.runtimeServiceAccount}, "runnerServiceAccount" = ${opts.runnerServiceAccount}
      WHERE "id" = ${attempt.id} AND "status" = 'queued' AND (SELECT n FROM busy) < ${pool.concurrency}
      RETURNING 1
    )
    SELECT (SELECT n FROM busy) AS "busy", (SELECT count(*) FROM claimed)::int AS "claimed"`;
  return { claimed: slot?.claimed === 1, busy: slot?.busy ?? 0, event };
}
