import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";

// Reading a run's transcript for the page: windows of events bounded by count
// AND bytes (no response over 2 MB, however large the events), and search over
// the whole transcript so a match outside the loaded window can be jumped to.

/**
 * Payload bytes per window: with its envelope a window stays under 1 MB, so even
 * two windows batched into one tRPC response stay under 2 MB.
 */
export const maxWindowBytes = 900_000;

export type TranscriptEvent = { seq: number; type: string; payload: unknown; attemptId: string | null; createdAt: Date };

type Row = TranscriptEvent & { size: number };

/**
 * A window of a run's events, returned oldest first:
 * - neither cursor: the newest `limit` events (the page opens at the tail);
 * - `beforeSeq`: the `limit` events just before it (scrolling up);
 * - `afterSeq`: the `limit` events just after it (scrolling down after a jump).
 * The window stops early at `maxBytes` of payload, keeping the events nearest
 * the cursor, and always holds at least one event when any exist.
 */
export async function listRunEvents(opts: {
  db: Db;
  runId: string;
  beforeSeq?: number;
  afterSeq?: number;
  limit: number;
  maxBytes?: number;
}): Promise<TranscriptEvent[]> {
  if (opts.beforeSeq !== undefined && opts.afterSeq !== undefined) {
    throw new AppError("BAD_REQUEST", "Give beforeSeq or afterSeq, not both.");
  }
  const maxBytes = opts.maxBytes ?? maxWindowBytes;
  const { db, runId, limit } = opts;
  // Windows are seq ranges (seq is gap-free), so the index scan touches at most
  // `limit` rows whatever plan the statistics suggest.
  let range: { from: number; to: number };
  if (opts.afterSeq !== undefined) range = { from: opts.afterSeq + 1, to: opts.afterSeq + limit };
  else {
    const before = opts.beforeSeq ?? (await newestSeq(db, runId)) + 1;
    range = { from: before - limit, to: before - 1 };
  }
  let rows = await readWindow(db, runId, range, limit, opts.afterSeq !== undefined);
  if (rows.length === 0) {
    // Only if events were ever purged: jump to the nearest one that exists.
    const [near] =
      opts.afterSeq !== undefined
        ? await db.$queryRaw<{ seq: number | null }[]>`SELECT min("seq") AS "seq" FROM "RunEvent" WHERE "runId" = ${runId} AND "seq" > ${opts.afterSeq}`
        : await db.$queryRaw<{ seq: number | null }[]>`SELECT max("seq") AS "seq" FROM "RunEvent" WHERE "runId" = ${runId} AND "seq" < ${range.to + 1}`;
    if (near?.seq == null) return [];
    range = opts.afterSeq !== undefined ? { from: near.seq, to: near.seq + limit - 1 } : { from: near.seq - limit + 1, to: near.seq };
    rows = await readWindow(db, runId, range, limit, opts.afterSeq !== undefined);
  }
  // `size` is the payload total of the events nearer the cursor than this one.
  const kept = rows.filter((r) => r.size < maxBytes).map(({ size: _size, ...e }) => e);
  return opts.afterSeq !== undefined ? kept : kept.reverse();
}

async function newestSeq(db: Db, runId: string): Promise<number> {
  const run = await db.agentDispatchRun.findUnique({ where: { id: runId }, select: { lastEventSeq: true } });
  return run?.lastEventSeq ?? 0;
}

/** Rows of `range`, ordered from the cursor outwards, with the running payload size. */
function readWindow(db: Db, runId: string, range: { from: number; to: number }, limit: number, ascending: boolean) {
  return ascending
    ? db.$queryRaw<Row[]>`
        SELECT "seq", "type", "payload", "attemptId", "createdAt",
               (sum(octet_length("payload"::text)) OVER (ORDER BY "seq") - octet_length("payload"::text))::float8 AS "size"
        FROM (SELECT * FROM "RunEvent" WHERE "runId" = ${runId} AND "seq" BETWEEN ${range.from} AND ${range.to} ORDER BY "seq" LIMIT ${limit}) page
        ORDER BY "seq"`
    : db.$queryRaw<Row[]>`
        SELECT "seq", "type", "payload", "attemptId", "createdAt",
               (sum(octet_length("payload"::text)) OVER (ORDER BY "seq" DESC) - octet_length("payload"::text))::float8 AS "size"
        FROM (SELECT * FROM "RunEvent" WHERE "runId" = ${runId} AND "seq" BETWEEN ${range.from} AND ${range.to} ORDER BY "seq" DESC LIMIT ${limit}) page
        ORDER BY "seq" DESC`;
}

export const maxSearchMatches = 1_000;

/** `%` and `_` are wildcards in ILIKE: a search for "50%" means the text "50%". */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The seqs of events whose type or any string in their payload contains
 * `query` (case-insensitive), oldest first, at most `limit`. Keys of the JSON
 * never match, so searching "text" does not find every message.
 */
export async function searchRunEvents(opts: { db: Db; runId: string; query: string; limit?: number }) {
  const query = opts.query.trim();
  const limit = opts.limit ?? maxSearchMatches;
  if (query === "") return { seqs: [] as number[], truncated: false };
  const pattern = likePattern(query);
  // The JSON text is a cheap pre-filter, valid only when the query has no
  // character JSON escapes; the exact test reads the string values.
  const prefilter = /["\\\u0000-\u001f]/.test(query) ? "%" : pattern;
  const rows = await opts.db.$queryRaw<{ seq: number }[]>`
    SELECT "seq" FROM "RunEvent" e
    WHERE e."runId" = ${opts.runId}
      AND (e."type" ILIKE ${pattern} OR (
        e."payload"::text ILIKE ${prefilter}
        AND EXISTS (
          SELECT 1 FROM jsonb_path_query(e."payload", 'strict $.**') v
          WHERE jsonb_typeof(v) = 'string' AND (v #>> '{}') ILIKE ${pattern}
        )))
    ORDER BY "seq"
    LIMIT ${limit + 1}`;
  return { seqs: rows.slice(0, limit).map((r) => r.seq), truncated: rows.length > limit };
}
