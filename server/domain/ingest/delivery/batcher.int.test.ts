// The route's group commit against a real database: concurrent deliveries share statements,
// repeats of an id (within a batch or across batches) are recorded once, jobs only for new rows
// waiting for evaluation, split so several workers share a large statement, and a failed write
// fails every request in its batch.
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { DeliveryBatcher } from "./batcher";
import { prismaSql, type Sql } from "@/server/db/sql";
import { recordDeliveries, type DeliveryRecord } from "./store";

const db = getDb();

const delivery = (deliveryId: string, outcome: "received" | "ignored" = "received"): DeliveryRecord => ({
  deliveryId,
  source: "github",
  event: "workflow_job",
  action: "completed",
  payload: { action: "completed", id: deliveryId },
  outcome,
  detail: outcome === "ignored" ? "not handled" : null,
  receivedAt: new Date(),
});

// Deliveries named in evaluation jobs (batch payloads: one entry per delivery).
const jobsFor = async (prefix: string) => {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id,
      json_array_elements(j.payload) AS e
    WHERE t.identifier = 'delivery.evaluate' AND e->>'deliveryId' LIKE ${`${prefix}%`}`;
  return rows[0]?.n ?? 0;
};

describe("DeliveryBatcher", () => {
  it("records concurrent deliveries in shared statements, each id once, with jobs only for new received rows", async () => {
    let statements = 0;
    const base = prismaSql(db);
    const counting: Sql = { query: (text, values) => ((statements += 1), base.query(text, values)) };
    const batcher = new DeliveryBatcher(counting, { maxBatch: 16, maxInFlight: 1 });
    const records = [
      ...Array.from({ length: 20 }, () => delivery("batch-same")),
      ...Array.from({ length: 20 }, (_, i) => delivery(`batch-new-${i}`)),
      ...Array.from({ length: 20 }, (_, i) => delivery(`batch-ignored-${i}`, "ignored")),
    ].sort(() => Math.random() - 0.5);
    const results = await Promise.all(records.map((r) => batcher.record(r)));

    const sameResults = results.filter((_, i) => records[i]!.deliveryId === "batch-same");
    expect(sameResults.filter((r) => r.recorded)).toHaveLength(1);
    expect(results.filter((r) => r.recorded)).toHaveLength(41);
    expect(results.filter((r) => r.enqueued)).toHaveLength(21);
    expect(statements).toBeLessThan(records.length / 2);
    expect(await db.webhookDelivery.count({ where: { deliveryId: { startsWith: "batch-" } } })).toBe(41);
    expect(await jobsFor("batch-same")).toBe(1);
    expect(await jobsFor("batch-new-")).toBe(20);
    expect(await jobsFor("batch-ignored-")).toBe(0);
    const ignored = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: "batch-ignored-0" } });
    expect(ignored).toMatchObject({ outcome: "ignored", detail: "not handled" });
    expect(ignored.processedAt).not.toBeNull();

    // A later batch repeating an id already stored records nothing.
    expect(await batcher.record(delivery("batch-new-3"))).toEqual({ recorded: false, enqueued: false });
  });

  it("splits one statement's new rows over at least 4 jobs, each at most 64, so several workers share it", async () => {
    const sizes = async (prefix: string) => {
      const rows = await db.$queryRaw<{ n: number }[]>`
        SELECT json_array_length(j.payload)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
        WHERE t.identifier = 'delivery.evaluate' AND j.payload->0->>'deliveryId' LIKE ${`${prefix}%`} ORDER BY n DESC`;
      return rows.map((r) => r.n);
    };
    await recordDeliveries(prismaSql(db), Array.from({ length: 49 }, (_, i) => delivery(`spread-49-${i}`)));
    expect(await sizes("spread-49-")).toEqual([13, 13, 13, 10]);
    await recordDeliveries(prismaSql(db), Array.from({ length: 3 }, (_, i) => delivery(`spread-3-${i}`)));
    expect(await sizes("spread-3-")).toEqual([1, 1, 1]);
    await recordDeliveries(prismaSql(db), Array.from({ length: 300 }, (_, i) => delivery(`spread-300-${i}`)));
    expect(await sizes("spread-300-")).toEqual([64, 64, 64, 64, 44]);
  });

  it("fails every request of a batch whose write fails", async () => {
    const failing: Sql = { query: async () => Promise.reject(new Error("database unavailable")) };
    const batcher = new DeliveryBatcher(failing, { maxInFlight: 1 });
    const outcomes = await Promise.allSettled([batcher.record(delivery("fail-1")), batcher.record(delivery("fail-2"))]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(await db.webhookDelivery.count({ where: { deliveryId: { startsWith: "fail-" } } })).toBe(0);
  });
});
