// Group commit for the webhook route: deliveries that arrive while a write is in flight are
// recorded together by the next one (one statement: rows, jobs, a single NOTIFY), and each
// request is answered once its own batch has committed. At low load a delivery is written at
// once, alone; under a storm graphile-worker's per-job cost (its NOTIFY serialises commits) is
// paid once per batch instead of once per delivery.
import { recordDeliveries, type DeliveryRecord, type RecordResult } from "./store";
import type { Sql } from "@/server/db/sql";

type Pending = { record: DeliveryRecord; resolve: (r: RecordResult) => void; reject: (err: unknown) => void };

export type BatcherOptions = { maxBatch?: number; maxInFlight?: number };

export class DeliveryBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly sql: Sql,
    options: BatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxInFlight = options.maxInFlight ?? 2;
  }

  record(record: DeliveryRecord): Promise<RecordResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      this.pump();
    });
  }

  private pump() {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.flush(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flush(batch: Pending[]) {
    // One row per delivery id per statement: a repeat within the batch is a duplicate of the first.
    const first = new Map<string, Pending>();
    const repeats: Pending[] = [];
    for (const p of batch) {
      if (first.has(p.record.deliveryId)) repeats.push(p);
      else first.set(p.record.deliveryId, p);
    }
    try {
      const recorded = await recordDeliveries(this.sql, [...first.values()].map((p) => p.record));
      for (const [id, p] of first) {
        const isNew = recorded.has(id);
        p.resolve({ recorded: isNew, enqueued: isNew && p.record.outcome === "received" });
      }
      for (const p of repeats) p.resolve({ recorded: false, enqueued: false });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
