import type { Db } from "@/server/db";
import { isTerminalRun } from "@/server/domain/runs/lifecycle";
import type { RunStatus } from "@/server/db/generated/enums";
import { sseFrame } from "./sse";

// Reading a run's events for the stream. The payload comes back as PostgreSQL's
// own JSON text and goes into the frame as is: no parse and re-serialise per
// event, and the frame is encoded once however many subscribers receive it.

/** One event, ready to write: its frame is shared by every subscriber. */
export type PreparedEvent = {
  seq: number;
  type: string;
  bytes: Uint8Array;
  /** When the event was appended (ms since the epoch): the append-to-send histogram starts here. */
  appendedAt: number;
  /** Set on a run-scope status event: the status the run moved to. */
  runStatusTo?: RunStatus;
};

type EventRow = { seq: number; type: string; payload: string; attemptId: string | null; createdAt: Date };

const encoder = new TextEncoder();

/** The frame's data: the same shape runs.events returns, so the page merges both. */
export function eventFrameData(row: EventRow): string {
  const head = JSON.stringify({ seq: row.seq, type: row.type, attemptId: row.attemptId, createdAt: row.createdAt.toISOString() });
  return `${head.slice(0, -1)},"payload":${row.payload}}`;
}

export function prepareEvent(row: EventRow): PreparedEvent {
  const bytes = encoder.encode(sseFrame({ id: row.seq, event: row.type, data: eventFrameData(row) }));
  const prepared: PreparedEvent = { seq: row.seq, type: row.type, bytes, appendedAt: row.createdAt.getTime() };
  if (row.type === "status") {
    const p = JSON.parse(row.payload) as { scope?: string; to?: RunStatus };
    if (p.scope === "run" && p.to) prepared.runStatusTo = p.to;
  }
  return prepared;
}

/**
 * Consecutive events as one write: the frames of a burst, joined once and
 * shared by every subscriber (one socket write per subscriber per burst).
 */
export type EventChunk = { firstSeq: number; lastSeq: number; count: number; bytes: Uint8Array; /** The first event's append time (ms). */ appendedAt: number };

export function chunkOf(rows: readonly PreparedEvent[]): EventChunk {
  const bytes = rows.length === 1 ? rows[0]!.bytes : Buffer.concat(rows.map((r) => r.bytes));
  return { firstSeq: rows[0]!.seq, lastSeq: rows.at(-1)!.seq, count: rows.length, bytes, appendedAt: rows[0]!.appendedAt };
}

export const defaultPage = { limit: 500, maxBytes: 1024 * 1024 };

/**
 * Events after `afterSeq`, oldest first: at most `limit` rows and about
 * `maxBytes` of payload (always at least one row, so a huge event still moves
 * the cursor). Never one huge query: callers page with the last seq returned.
 */
export async function readEventsAfter(opts: {
  db: Db;
  runId: string;
  afterSeq: number;
  limit?: number;
  maxBytes?: number;
}): Promise<PreparedEvent[]> {
  const limit = opts.limit ?? defaultPage.limit;
  const maxBytes = opts.maxBytes ?? defaultPage.maxBytes;
  let from = opts.afterSeq;
  let rows = await readRange(opts.db, opts.runId, from, limit, maxBytes);
  if (rows.length === 0) {
    // seq is gap-free, so an empty range means the end; should events ever be
    // missing (a purge), skip to the next one that exists.
    const [next] = await opts.db.$queryRaw<{ seq: number | null }[]>`
      SELECT min("seq") AS "seq" FROM "RunEvent" WHERE "runId" = ${opts.runId} AND "seq" > ${from}`;
    if (next?.seq == null) return [];
    from = next.seq - 1;
    rows = await readRange(opts.db, opts.runId, from, limit, maxBytes);
  }
  return rows.map(prepareEvent);
}

// The seq range bounds the index scan to `limit` rows whatever plan the
// statistics suggest (a bulk-loaded run otherwise gets a scan-and-sort of all
// its events). Then LIMIT, then the running byte total over those rows only.
function readRange(db: Db, runId: string, after: number, limit: number, maxBytes: number) {
  return db.$queryRaw<EventRow[]>`
    SELECT "seq", "type", "payload", "attemptId", "createdAt" FROM (
      SELECT *, sum(octet_length("payload")) OVER (ORDER BY "seq") - octet_length("payload") AS "before"
      FROM (
        SELECT "seq", "type", "payload"::text AS "payload", "attemptId", "createdAt"
        FROM "RunEvent"
        WHERE "runId" = ${runId} AND "seq" > ${after} AND "seq" <= ${after + limit}
        ORDER BY "seq"
        LIMIT ${limit}
      ) page
    ) sized
    WHERE "before" < ${maxBytes}
    ORDER BY "seq"`;
}

/**
 * Every event after `afterSeq`, page by page: what a reconnecting client with
 * `Last-Event-ID: afterSeq` is owed from the database.
 */
export async function* resumeEvents(opts: { db: Db; runId: string; afterSeq: number; limit?: number; maxBytes?: number }) {
  let after = opts.afterSeq;
  for (;;) {
    const page = await readEventsAfter({ ...opts, afterSeq: after });
    if (page.length === 0) return;
    yield page;
    after = page.at(-1)!.seq;
  }
}

export type RunProgress = { status: RunStatus; lastEventSeq: number; repositoryId: string };

export async function readRunProgress(db: Db, runId: string): Promise<RunProgress | null> {
  return db.agentDispatchRun.findUnique({ where: { id: runId }, select: { status: true, lastEventSeq: true, repositoryId: true } });
}

/** The stream is complete once the run is terminal and every event it has was sent. */
export function streamComplete(progress: RunProgress | null, lastSentSeq: number): boolean {
  return progress !== null && isTerminalRun(progress.status) && progress.lastEventSeq <= lastSentSeq;
}
