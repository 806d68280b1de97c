// Recording a delivery: one statement inserts the WebhookDelivery row (ON CONFLICT on the
// delivery id does nothing, so a redelivery is a no-op) and, only when the row was new, names it
// in a "delivery.evaluate" batch job. One statement is one transaction: a delivery is never stored without
// its job, and a crash after the acknowledgement loses nothing.
import { randomUUID } from "node:crypto";
import type { DeliveryOutcome, ForgeKind } from "@/server/db/generated/enums";
import { redactDeep, type KnownSecret } from "@/server/domain/context/redaction/redact";
import { boundJson, type JsonLimits } from "@/server/lib/text-boundary";
import { DELIVERY_BATCH_MAX, jobs } from "@/server/queue/jobs";
import type { Sql } from "@/server/db/sql";

export type DeliveryRecord = {
  deliveryId: string;
  source: ForgeKind;
  event: string;
  action: string | null;
  /** Already sanitised (see sanitizePayload). */
  payload: unknown;
  /** received: waits for evaluation; ignored / rejected: final at once. */
  outcome: Extract<DeliveryOutcome, "received" | "ignored" | "rejected">;
  detail: string | null;
  receivedAt: Date;
};

export type RecordResult = { recorded: boolean; enqueued: boolean };

/** Jobs a statement's new rows are split into at least (when it has that many): the workers that can share it. */
const DELIVERY_BATCH_SPREAD = 4;

/** A delivery id: GitHub's GUID, or the local forge's own id. */
export const DELIVERY_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

export async function recordDelivery(sql: Sql, d: DeliveryRecord): Promise<RecordResult> {
  const recorded = await recordDeliveries(sql, [d]);
  return { recorded: recorded.has(d.deliveryId), enqueued: recorded.has(d.deliveryId) && d.outcome === "received" };
}

/**
 * Record several deliveries in one statement: the rows that are new, and "delivery.evaluate"
 * batch jobs naming the new rows waiting for evaluation (graphile-worker's add_jobs: one NOTIFY for the
 * lot). Returns the delivery ids that were new. Ids must be distinct within one call.
 */
export async function recordDeliveries(sql: Sql, records: readonly DeliveryRecord[]): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  const input = records.map((d) => ({
    id: randomUUID(),
    deliveryId: d.deliveryId,
    source: d.source,
    event: d.event,
    action: d.action,
    payload: d.payload,
    outcome: d.outcome,
    detail: d.detail,
    receivedAt: d.receivedAt.toISOString(),
    processedAt: d.outcome === "received" ? null : d.receivedAt.toISOString(),
    evaluate: d.outcome === "received",
  }));
  // The job contract is validated like every enqueue (server/queue/enqueue.ts); the SQL builds
  // the same payload, [{deliveryId}, ...], for the rows that were inserted: batch jobs
  // (evaluation/batch.ts) of at most DELIVERY_BATCH_MAX, and at least DELIVERY_BATCH_SPREAD of
  // them when there are that many rows, so several worker processes share a large statement
  // (one job of 49 kept 3 of 4 workers mostly idle: `npm run bench -- webhooks --concurrency 64`).
  jobs["delivery.evaluate"].parse(records.slice(0, DELIVERY_BATCH_MAX).map((d) => ({ deliveryId: d.deliveryId })));
  const { rows } = await sql.query<{ deliveryId: string }>(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
         "id" text, "deliveryId" text, "source" text, "event" text, "action" text, "payload" jsonb,
         "outcome" text, "detail" text, "receivedAt" timestamptz, "processedAt" timestamptz, "evaluate" boolean)
     ), ins AS (
       INSERT INTO "WebhookDelivery"
         ("id", "deliveryId", "source", "event", "action", "payload", "outcome", "detail", "receivedAt", "processedAt")
       SELECT "id", "deliveryId", "source"::"ForgeKind", "event", "action", "payload", "outcome"::"DeliveryOutcome",
         "detail", "receivedAt", "processedAt"
       FROM input
       ON CONFLICT ("deliveryId") DO NOTHING
       RETURNING "deliveryId"
     ), queued AS (
       SELECT ins."deliveryId" FROM ins JOIN input USING ("deliveryId") WHERE input."evaluate"
     ), enqueued AS (
       SELECT CASE WHEN EXISTS (SELECT 1 FROM queued) THEN (
         SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
           SELECT ROW('delivery.evaluate', json_agg(json_build_object('deliveryId', "deliveryId") ORDER BY n), NULL, NULL, 10, NULL, NULL, NULL)::graphile_worker.job_spec
           FROM (SELECT "deliveryId", row_number() OVER () - 1 AS n, count(*) OVER () AS total FROM queued) numbered
           GROUP BY n / LEAST(${DELIVERY_BATCH_MAX}, GREATEST(1, ceil(total / ${DELIVERY_BATCH_SPREAD}::numeric)::bigint))))
       ) ELSE 0 END AS n
     )
     SELECT ins."deliveryId" FROM ins, enqueued`,
    [JSON.stringify(input)],
  );
  return new Set(rows.map((r) => r.deliveryId));
}

/** The text boundary for a delivery's payload (its size is already bounded by WEBHOOK_MAX_BYTES). */
export const deliveryPayloadLimits: Partial<JsonLimits> = { maxDepth: 64, maxTotalChars: 8 * 1024 * 1024, maxStringChars: 4 * 1024 * 1024 };

/**
 * What is stored of a payload: first the text boundary (NUL and unpaired surrogates replaced,
 * nesting past 64 levels cut with a marker: PostgreSQL's jsonb could hold neither, and every
 * recursive walk after this one can then not overflow), then every string and key redacted
 * (token shapes and known secret values, so a secret pasted into a PR body or echoed in a log
 * never reaches the database).
 */
export function sanitizePayload<T>(payload: T, secrets: readonly KnownSecret[]): T {
  return redactDeep(boundJson(payload, deliveryPayloadLimits).value, { secrets }).value;
}

/** One line for WebhookDelivery.detail; bounded so a long skip list cannot bloat the row. */
export function boundedDetail(text: string, max = 2_000): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
