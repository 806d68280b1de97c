import { afterCommit, type Db } from "@/server/db";
import { observeRunEvents } from "@/server/observability/observe-events";
import { currentTraceParent } from "@/server/observability/tracing";
import { AppError } from "@/server/errors";
import { boundJson } from "@/server/lib/text-boundary";
import { eventPayloadLimits, validateRunEvent, type RunEventInput } from "./catalogue";

/** The channel every web process LISTENs on for new run events. */
export const RUN_EVENTS_CHANNEL = "airlock_run_events";

export type AppendResult = { firstSeq: number; lastSeq: number };

/**
 * Appends events to a run's transcript with the next `seq` values. The run row's counter is
 * bumped in the same statement that inserts the rows and sends NOTIFY, so concurrent writers
 * serialise on that row and `seq` stays strictly increasing and gap-free (a rolled-back append
 * rolls its counter back too), and listeners hear of the events only once they are committed.
 * One statement, one round trip: the transcript's write path is the hottest in Airlock.
 * The same statement stamps the run with the active trace (first append wins), and once the
 * events are committed they are observed (metrics, logs, spans: server/observability).
 */
export async function appendRunEvents(opts: {
  db: Db;
  runId: string;
  events: RunEventInput[];
  attemptId?: string | null;
}): Promise<AppendResult> {
  const { runId, attemptId = null } = opts;
  // The text boundary first: NUL, lone surrogates, hostile depth and size never reach the insert.
  const events = opts.events.map((e) => validateRunEvent({ type: e.type, payload: boundJson(e.payload, eventPayloadLimits).value }));
  if (events.length === 0) throw new AppError("BAD_REQUEST", "No events to append.");
  const n = events.length;
  const rows = JSON.stringify(events.map((e) => ({ type: e.type, payload: e.payload })));
  // Data-modifying CTEs always run; the notify CTE runs because the final SELECT reads it.
  const [row] = await opts.db.$queryRaw<{ lastEventSeq: number; notified: number }[]>`
    WITH bumped AS (
      UPDATE "AgentDispatchRun" SET "lastEventSeq" = "lastEventSeq" + ${n}::int,
        "traceParent" = COALESCE("traceParent", ${currentTraceParent()}::text)
      WHERE "id" = ${runId} RETURNING "lastEventSeq"
    ), inserted AS (
      INSERT INTO "RunEvent" ("runId", "seq", "type", "payload", "attemptId")
      SELECT ${runId}, b."lastEventSeq" - ${n}::int + e.ord::int, e.value->>'type', e.value->'payload', ${attemptId}
      FROM bumped b, jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS e(value, ord)
      RETURNING 1
    ), notified AS (
      SELECT pg_notify(${RUN_EVENTS_CHANNEL}, '{"runId":' || to_json(${runId}::text)::text || ',"seq":' || b."lastEventSeq" || '}')
      FROM bumped b
    )
    SELECT b."lastEventSeq", (SELECT count(*) FROM notified)::int AS "notified" FROM bumped b`;
  if (!row) throw new AppError("NOT_FOUND", `No run ${runId}.`);
  afterCommit(opts.db, () => observeRunEvents({ runId, attemptId, events }));
  return { firstSeq: row.lastEventSeq - n + 1, lastSeq: row.lastEventSeq };
}
