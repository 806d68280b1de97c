import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { AttemptStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import type { RunEventInput } from "../events/catalogue";
import { appendRunEvents, type AppendResult } from "../events/append";
import { lockRun } from "./transition";

// Fencing for everything an attempt writes (events, artifacts, heartbeats, its own status).
// A worker that stalls (GC pause, SIGSTOP, network partition) may wake after its attempt was
// marked lost and a successor started; every write it makes carries the attempt's fencing token
// and is refused unless, at that moment, the attempt is still active and no newer attempt of the
// run exists. The check runs in the write's own transaction after locking the run row, the same
// lock the reaper, cancel and retry take before changing an attempt, so the check and the write
// see one consistent state.

export type AttemptFence = { runId: string; attemptId: string; fencingToken: number };

/** Thrown when a write carries a stale fencing token: the attempt was replaced, lost or stopped. */
export class FencedError extends AppError {
  constructor(message: string, details: Record<string, unknown>) {
    super("CONFLICT", message, { reason: "fenced", details });
    this.name = "FencedError";
  }
}

export function isFencedError(err: unknown): err is FencedError {
  return err instanceof AppError && err.reason === "fenced";
}

type FenceRow = { status: AttemptStatus; number: number; fencingToken: number; newest: number };

/**
 * Locks the run row, then checks the fence and renews the attempt's lease (a fenced write proves
 * its worker is alive). Call first inside a transaction; throws FencedError. Returns the
 * attempt's status and number.
 */
export async function checkFence(tx: Tx, fence: AttemptFence, now = new Date()): Promise<{ status: AttemptStatus; number: number }> {
  if (!(await lockRun(tx, fence.runId))) throw new AppError("NOT_FOUND", `No run ${fence.runId}.`);
  // A new statement after the lock: under READ COMMITTED it sees whatever the previous lock
  // holder committed (an attempt marked lost, a successor inserted).
  const [renewed] = await tx.$queryRaw<{ status: AttemptStatus; number: number }[]>`
    UPDATE "DispatchAttempt" a SET "heartbeatAt" = ${now}
    WHERE a."id" = ${fence.attemptId} AND a."runId" = ${fence.runId} AND a."fencingToken" = ${fence.fencingToken}
      AND a."status" IN ('starting', 'running')
      AND NOT EXISTS (SELECT 1 FROM "DispatchAttempt" b WHERE b."runId" = a."runId" AND b."fencingToken" > ${fence.fencingToken})
    RETURNING a."status", a."number"`;
  if (renewed) return renewed;

  // Refused: say why.
  const [row] = await tx.$queryRaw<FenceRow[]>`
    SELECT a."status", a."number", a."fencingToken",
           (SELECT max(b."fencingToken") FROM "DispatchAttempt" b WHERE b."runId" = a."runId")::int AS "newest"
    FROM "DispatchAttempt" a WHERE a."id" = ${fence.attemptId} AND a."runId" = ${fence.runId}`;
  const details = { ...fence, status: row?.status ?? null, newestToken: row?.newest ?? null };
  if (!row) throw new FencedError(`Attempt ${fence.attemptId} does not belong to run ${fence.runId}.`, details);
  if (row.fencingToken !== fence.fencingToken || row.newest > fence.fencingToken) {
    throw new FencedError(`Attempt ${row.number} was replaced by a newer attempt; its write is refused.`, details);
  }
  throw new FencedError(`Attempt ${row.number} is ${row.status}; its write is refused.`, details);
}

/** Runs `fn` in a transaction that first checks the fence (see checkFence). */
export function withFence<T>(
  db: Db,
  name: string,
  fence: AttemptFence,
  fn: (tx: Tx, attempt: { status: AttemptStatus; number: number }) => Promise<T>,
): Promise<T> {
  return transaction(db, name, async (tx) => fn(tx, await checkFence(tx, fence)));
}

/**
 * Appends an attempt's events, fenced (which renews its lease: any write proves the worker
 * lives). `also` runs in the same transaction (cost totals).
 */
export function appendAttemptEvents(opts: {
  db: Db;
  fence: AttemptFence;
  events: RunEventInput[];
  also?: (tx: Tx) => Promise<void>;
}): Promise<AppendResult> {
  return withFence(opts.db, "appendAttemptEvents", opts.fence, async (tx) => {
    await opts.also?.(tx);
    return appendRunEvents({ db: tx, runId: opts.fence.runId, attemptId: opts.fence.attemptId, events: opts.events });
  });
}
