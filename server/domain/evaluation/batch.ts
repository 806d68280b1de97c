// Evaluation in batches: one "delivery.evaluate" job names a share of the deliveries one ingest
// statement recorded (ingest/delivery/store.ts: a quarter, at most DELIVERY_BATCH_MAX), so under a storm a job carries dozens and when quiet one.
// The batch reads every row in one statement, decides each cheaply (decideEarly: screened with
// the cached repository and rules, prefiltered) and stores all final outcomes in one statement;
// only the deliveries left need the full evaluation, a few at a time, each in its own transaction
// exactly as evaluateDelivery runs it, so every per-delivery guarantee holds unchanged: the
// delivery row's lock and processedAt make a retry (or a crash mid-batch, retried whole) a no-op
// for what is done, the dedupe key's advisory lock and unique index stop a second run. Each
// delivery's outcome is its own entry: one that throws (a poison delivery) fails alone and
// graphile-worker re-queues only the failed entries (its batch-job contract), while the others
// are stored.
import type { DeliveryOutcome } from "@/server/db/generated/enums";
import { decideEarly, evaluateInFull, readDeliveries, recordFinal, result, type EarlyDecision, type EvaluateOptions, type EvaluationResult, type PendingDelivery } from "./evaluate";

/** Full evaluations a batch runs at once: the worker's job concurrency (server/queue/worker.ts). */
const FULL_CONCURRENCY = 4;

/** One delivery's outcome in a batch: its result, or why it failed (graphile-worker retries it alone). */
export type BatchEntry = { deliveryId: string } & ({ ok: true; result: EvaluationResult } | { ok: false; error: unknown });

/**
 * Evaluates `deliveryIds` (in that order) and returns one entry per id, in that order. Throws only
 * when the batch as a whole cannot proceed (the rows or the final outcomes cannot be read or
 * written: the job is retried whole, which is safe). `rows`: already read by the caller.
 */
export async function evaluateBatch(
  opts: EvaluateOptions & {
    deliveryIds: readonly string[];
    rows?: readonly PendingDelivery[];
    /** Full evaluations at once (FULL_CONCURRENCY). */
    concurrency?: number;
    /** The full evaluation of one delivery (tests wrap it to inject a failure). */
    inFull?: typeof evaluateInFull;
  },
): Promise<BatchEntry[]> {
  const { db } = opts;
  const now = opts.now ?? new Date();
  const inFull = opts.inFull ?? evaluateInFull;
  const byId = new Map((opts.rows ?? (await readDeliveries(db, opts.deliveryIds))).map((r) => [r.deliveryId, r]));
  const entries = new Map<string, BatchEntry>();
  const full: { deliveryId: string; early: Extract<EarlyDecision, { kind: "full" }> }[] = [];
  const finals: { deliveryId: string; outcome: DeliveryOutcome; detail: string; result: EvaluationResult }[] = [];

  for (const deliveryId of opts.deliveryIds) {
    if (entries.has(deliveryId)) continue;
    const row = byId.get(deliveryId);
    if (!row) entries.set(deliveryId, { deliveryId, ok: true, result: result(deliveryId, "missing", "no such delivery") });
    else if (row.processedAt) entries.set(deliveryId, { deliveryId, ok: true, result: result(deliveryId, "skipped", "already processed") });
    else {
      try {
        const early = await decideEarly(db, row, { now, prefilter: opts.prefilter });
        if (early.kind === "final") finals.push({ deliveryId, outcome: early.outcome, detail: early.result.detail, result: early.result });
        else full.push({ deliveryId, early });
      } catch (error) {
        entries.set(deliveryId, { deliveryId, ok: false, error });
      }
    }
  }
  // Every delivery decided early, in one statement (a concurrent evaluation's outcome is kept).
  await recordFinal(db, finals, now);
  for (const f of finals) entries.set(f.deliveryId, { deliveryId: f.deliveryId, ok: true, result: f.result });
  // A few at a time, as separate jobs would run: much of a full evaluation waits on PostgreSQL
  // (and on GitHub for a job log), and concurrent evaluations are safe by construction (the
  // dedupe keys' advisory locks, taken in one order: locks.ts).
  let next = 0;
  const lane = async () => {
    while (next < full.length) {
      const { deliveryId, early } = full[next++]!;
      try {
        entries.set(deliveryId, { deliveryId, ok: true, result: await inFull(early, { ...opts, now }) });
      } catch (error) {
        entries.set(deliveryId, { deliveryId, ok: false, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? FULL_CONCURRENCY, full.length) }, lane));
  return opts.deliveryIds.map((id) => entries.get(id)!);
}
