// Evaluation in batches (batch.ts) against a real database: a crash mid-batch, retried whole,
// makes no duplicate run, drop or decision; a poison delivery fails alone; ingest names a
// statement's deliveries in one job and graphile-worker re-queues only a batch's failed entries.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-batch-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob, releasePublished } = await import("@/server/domain/ingest/fixtures/deliveries");
const { nextDeliveryId } = await import("./fixtures/harness");
const { recordDeliveries } = await import("@/server/domain/ingest/delivery/store");
const { prismaSql } = await import("@/server/db/sql");
const { runPendingJobs } = await import("@/server/domain/ingest/fixtures/run-once");
const { evaluateDeliveryTask } = await import("@/server/queue/tasks/evaluate-delivery");
const { evaluateBatch } = await import("./batch");
const { evaluateInFull } = await import("./evaluate");

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

/** A batch like a storm's: one failure sent as 3 delivery ids, 2 failures no rule matches, a release. */
async function stormBatch(tag: string) {
  const repo = await createRepository();
  await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, job: "test" });
  const headSha = sha(`batch-${tag}`);
  const failure = (jobName: string, n: number, head = headSha) =>
    failedWorkflowJob({ repo: repo.fullName, runId: 900 + n, jobId: 9900 + n, jobName, step: "Run it", headSha: head, headBranch: "feature/batch" });
  const dispatches = failure("test", 0);
  const deliveries = [
    ...Array.from({ length: 3 }, () => ({ ...dispatches, action: "completed" })),
    { ...failure("lint", 1, sha(`${tag}-lint`)), action: "completed" },
    { ...failure("docs", 2, sha(`${tag}-docs`)), action: "completed" },
    { ...releasePublished({ repo: repo.fullName, tag: `v9.${tag.length}.0`, targetCommitish: "main" }), action: "published" },
  ];
  const records = deliveries.map((d) => ({
    deliveryId: nextDeliveryId(`batch-${tag}`),
    source: "github" as const,
    event: d.event,
    action: d.action,
    payload: d.payload,
    outcome: "received" as const,
    detail: null,
    receivedAt: new Date(),
  }));
  await recordDeliveries(prismaSql(db), records);
  return { repo, headSha, ids: records.map((r) => r.deliveryId) };
}

async function written(repositoryId: string, ids: readonly string[]) {
  const [runs, drops, triage, processed, events] = await Promise.all([
    db.agentDispatchRun.findMany({ where: { repositoryId }, select: { id: true, dedupeKey: true } }),
    db.triggerDrop.findMany({ where: { deliveryId: { in: [...ids] } }, select: { deliveryId: true, dedupeKey: true } }),
    db.triageDecision.findMany({ where: { repositoryId }, select: { key: true } }),
    db.webhookDelivery.findMany({ where: { deliveryId: { in: [...ids] }, processedAt: { not: null } }, select: { deliveryId: true, outcome: true } }),
    db.runEvent.count({ where: { run: { repositoryId } } }),
  ]);
  return { runs, drops, triage, processed, events };
}

describe("evaluation in batches", () => {
  it("a crash mid-batch, retried whole, makes no duplicate run, drop or triage decision", async () => {
    const { repo, ids } = await stormBatch("crash");
    let fullEvaluations = 0;
    // The worker dies after two full evaluations: every later one in the batch fails with it.
    const crashing: typeof evaluateInFull = async (early, opts) => {
      if (++fullEvaluations > 2) throw new Error("worker died");
      return evaluateInFull(early, opts);
    };
    const first = await evaluateBatch({ db, deliveryIds: ids, inFull: crashing });
    expect(first.filter((e) => !e.ok)).toHaveLength(3);
    // The release was decided early and stored in the same batch; two failures are done.
    expect((await written(repo.id, ids)).processed).toHaveLength(3);

    // graphile-worker retries the job (here: the whole payload, as after a crash).
    const retry = await evaluateBatch({ db, deliveryIds: ids });
    expect(retry.every((e) => e.ok)).toBe(true);
    expect(retry.filter((e) => e.ok && e.result.outcome === "skipped")).toHaveLength(3);
    const after = await written(repo.id, ids);
    expect(after.runs).toHaveLength(1);
    expect(after.drops).toHaveLength(2);
    expect(new Set(after.drops.map((d) => d.deliveryId)).size).toBe(2);
    expect(after.drops.every((d) => d.dedupeKey === after.runs[0]!.dedupeKey)).toBe(true);
    // One triage decision per failure (the dispatching one and two no rule matches).
    expect(after.triage).toHaveLength(3);
    expect(after.processed).toHaveLength(ids.length);

    // A second retry changes nothing at all.
    await evaluateBatch({ db, deliveryIds: ids });
    expect(await written(repo.id, ids)).toEqual(after);
  });

  it("a poison delivery fails alone: the rest of its batch is stored, and it evaluates once it can", async () => {
    const { repo, ids } = await stormBatch("poison");
    const poison = ids[3]!;
    const entries = await evaluateBatch({
      db,
      deliveryIds: ids,
      inFull: async (early, opts) => {
        if (early.screened.deliveryId === poison) throw new Error("poison delivery");
        return evaluateInFull(early, opts);
      },
    });
    expect(entries.map((e) => [e.deliveryId, e.ok])).toEqual(ids.map((id) => [id, id !== poison]));
    const mid = await written(repo.id, ids);
    expect(mid.processed.map((p) => p.deliveryId).sort()).toEqual(ids.filter((id) => id !== poison).sort());
    expect(mid.runs).toHaveLength(1);

    const again = await evaluateBatch({ db, deliveryIds: [poison] });
    expect(again[0]).toMatchObject({ ok: true, result: { outcome: "processed" } });
    expect((await written(repo.id, ids)).processed).toHaveLength(ids.length);
  });

  it("ingest splits one statement's deliveries over batch jobs (4 when it can, so workers share it); their handler evaluates the batches", async () => {
    const { repo, ids } = await stormBatch("job");
    const jobs = await db.$queryRaw<{ payload: { deliveryId: string }[] }[]>`
      SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier = 'delivery.evaluate' AND j.payload->0->>'deliveryId' = ANY(${ids}) ORDER BY j.id`;
    // 6 deliveries: jobs of ceil(6 / 4) = 2.
    expect(jobs.map((j) => j.payload.length)).toEqual([2, 2, 2]);
    expect(jobs.flatMap((j) => j.payload.map((p) => p.deliveryId))).toEqual(ids);

    await runPendingJobs({ "delivery.evaluate": (payload) => evaluateDeliveryTask(payload, { db }) });
    const after = await written(repo.id, ids);
    expect(after.processed).toHaveLength(ids.length);
    expect(after.runs).toHaveLength(1);
    expect(after.drops).toHaveLength(2);
  });

  it("a batch job's failed entry is re-queued alone", async () => {
    const { ids } = await stormBatch("requeue");
    // A handler whose second entry fails: graphile-worker keeps only that entry in the job.
    await runPendingJobs({
      "delivery.evaluate": async (payload) => {
        const entries = payload as { deliveryId: string }[];
        if (!Array.isArray(entries) || !entries.some((e) => e.deliveryId === ids[0])) return evaluateDeliveryTask(payload, { db });
        return entries.map((e, i) => {
          if (i !== 1) return Promise.resolve();
          const failed = Promise.reject(new Error("entry failed"));
          failed.catch(() => undefined);
          return failed;
        });
      },
    });
    const left = await db.$queryRaw<{ payload: unknown }[]>`
      SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier = 'delivery.evaluate' AND j.payload::jsonb @> ${JSON.stringify([{ deliveryId: ids[1] }])}::jsonb`;
    expect(left.map((j) => j.payload)).toEqual([[{ deliveryId: ids[1] }]]);
  });
});
