// Two workers share one storm exactly: two graphile-worker runners, each with its own database
// client, pool and rule cache (what two worker processes have), evaluate the same redelivery storm
// while it arrives through the real webhook route. Every failure comes as several delivery ids,
// GitHub redelivers some ids (the route drops those), and every delivery's job is queued twice
// (a job retried after a crash, a person's re-evaluation): still exactly one run per dedupe key,
// one duplicate drop per extra delivery id and rule, one "dispatch_skipped" event per drop, one
// pipeline and job per failure, and no write-back or approval (evaluation makes suggestions).
import { Logger, run, type Runner } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-two-workers";

const { createPrismaClient, getDb } = await import("@/server/db");
const { requireDatabaseUrl } = await import("@/server/env");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob, releasePublished } = await import("@/server/domain/ingest/fixtures/deliveries");
const { nextDeliveryId, post } = await import("./fixtures/harness");
const { enqueue } = await import("@/server/queue/enqueue");
const { evaluateDeliveryTask } = await import("@/server/queue/tasks/evaluate-delivery");

const db = getDb();
const FAILURES = 8;
const IDS_PER_FAILURE = 4;
const clients = [createPrismaClient(requireDatabaseUrl()), createPrismaClient(requireDatabaseUrl())];
const runners: Runner[] = [];
const evaluatedBy = [0, 0];

beforeAll(async () => {
  const quiet = new Logger(() => (level, message) => {
    if (level === "error") process.stderr.write(`[worker] ${message}\n`);
  });
  for (const [i, client] of clients.entries()) {
    runners.push(
      await run({
        connectionString: requireDatabaseUrl(),
        concurrency: 4,
        pollInterval: 200,
        noHandleSignals: true,
        logger: quiet,
        taskList: {
          "delivery.evaluate": async (payload) => {
            const out = await evaluateDeliveryTask(payload, { db: client });
            // Deliveries, not jobs: a batch job names several.
            evaluatedBy[i]! += Array.isArray(payload) ? payload.length : 1;
            return out;
          },
        },
      }),
    );
  }
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await Promise.all(clients.map((c) => c.$disconnect()));
});

async function settled(deliveryIds: readonly string[]) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const open = await db.webhookDelivery.count({ where: { deliveryId: { in: [...deliveryIds] }, processedAt: null } });
    const [row] = await db.$queryRaw<{ jobs: number }[]>`SELECT count(*)::int AS jobs FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate'`;
    const jobs = row?.jobs ?? 0;
    if (open === 0 && jobs === 0) return;
    if (Date.now() > deadline) throw new Error(`storm not settled: ${open} deliveries unevaluated, ${jobs} jobs left`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("two workers on one storm", () => {
  it("make exactly one run per dedupe key and one drop per duplicate, however the jobs are split", async () => {
    const stack = await createStack(db);
    const repo = await createRepository();
    const quiet = await createRepository();
    // Two rules fire for each failure (two dedupe keys); the quiet repository's rule never matches.
    for (const job of ["test", null]) {
      const rule = await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: repo.id, ...(job ? { job } : {}) });
      await db.triggerRule.update({ where: { id: rule.id }, data: { alsoFire: true } });
    }
    await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: quiet.id, job: "deploy" });

    const shas = Array.from({ length: FAILURES }, (_, f) => sha(`two-workers-${f}`));
    const sends: { delivery: ReturnType<typeof failedWorkflowJob>; deliveryId: string }[] = [];
    for (const [f, headSha] of shas.entries()) {
      const failure = failedWorkflowJob({ repo: repo.fullName, runId: 70_000 + f, jobId: 80_000 + f, jobName: "test", step: "Run npm test", headSha, headBranch: "main" });
      const other = failedWorkflowJob({ repo: quiet.fullName, runId: 90_000 + f, jobId: 91_000 + f, jobName: "test", step: "Run npm test", headSha, headBranch: "main" });
      for (let i = 0; i < IDS_PER_FAILURE; i++) {
        const deliveryId = nextDeliveryId(`storm-${f}`);
        sends.push({ delivery: failure, deliveryId }, { delivery: failure, deliveryId }); // GitHub redelivers the id
        sends.push({ delivery: other, deliveryId: nextDeliveryId(`quiet-${f}`) });
      }
      sends.push({ delivery: releasePublished({ repo: repo.fullName, tag: `v9.${f}.0`, targetCommitish: "main" }), deliveryId: nextDeliveryId("release") });
    }
    sends.sort(() => Math.random() - 0.5);
    // Arrives while both workers evaluate, eight requests at a time.
    const statuses: number[] = [];
    for (let i = 0; i < sends.length; i += 8) {
      statuses.push(...(await Promise.all(sends.slice(i, i + 8).map((s) => post(s.delivery, s.deliveryId)))).map((r) => r.status));
    }
    expect(statuses.every((s) => s === 202 || s === 200)).toBe(true);
    const ids = [...new Set(sends.map((s) => s.deliveryId))];
    // Every delivery's job once more: a retried or re-queued job must change nothing.
    for (const deliveryId of ids) await enqueue(db, "delivery.evaluate", { deliveryId });
    await settled(ids);

    // Both workers took part.
    expect(evaluatedBy[0]).toBeGreaterThan(0);
    expect(evaluatedBy[1]).toBeGreaterThan(0);
    expect(evaluatedBy[0]! + evaluatedBy[1]!).toBeGreaterThanOrEqual(ids.length * 2);

    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: { in: [repo.id, quiet.id] } }, select: { id: true, dedupeKey: true, headSha: true, repositoryId: true } });
    expect(runs.every((r) => r.repositoryId === repo.id)).toBe(true);
    expect(new Set(runs.map((r) => r.dedupeKey)).size).toBe(runs.length);
    expect(runs).toHaveLength(FAILURES * 2);
    for (const headSha of shas) expect(runs.filter((r) => r.headSha === headSha)).toHaveLength(2);

    const drops = await db.triggerDrop.findMany({ where: { runId: { in: runs.map((r) => r.id) } }, select: { deliveryId: true, dedupeKey: true, reason: true, runId: true } });
    const duplicates = drops.filter((d) => d.reason.startsWith("duplicate trigger"));
    // Each run: one duplicate drop from every other delivery id of its failure, never two from one.
    expect(duplicates).toHaveLength(FAILURES * 2 * (IDS_PER_FAILURE - 1));
    expect(new Set(duplicates.map((d) => `${d.deliveryId}|${d.dedupeKey}`)).size).toBe(duplicates.length);
    for (const run of runs) expect(duplicates.filter((d) => d.runId === run.id)).toHaveLength(IDS_PER_FAILURE - 1);
    const skipped = await db.runEvent.count({ where: { runId: { in: runs.map((r) => r.id) }, type: "dispatch_skipped" } });
    expect(skipped).toBe(duplicates.length);

    // Records written once per failure, whichever worker wrote them.
    expect(await db.pipeline.count({ where: { repositoryId: repo.id } })).toBe(FAILURES);
    expect(await db.job.count({ where: { pipeline: { repositoryId: repo.id } } })).toBe(FAILURES);
    expect(await db.pipeline.count({ where: { repositoryId: quiet.id } })).toBe(FAILURES);
    expect(await db.writeBack.count({ where: { runId: { in: runs.map((r) => r.id) } } })).toBe(0);
    expect(await db.approvalRequest.count({ where: { runId: { in: runs.map((r) => r.id) } } })).toBe(0);

    // Every delivery evaluated once: processed, with one outcome.
    const rows = await db.webhookDelivery.findMany({ where: { deliveryId: { in: ids } }, select: { outcome: true } });
    expect(rows).toHaveLength(ids.length);
    expect(rows.filter((r) => r.outcome === "failed")).toHaveLength(0);
  }, 180_000);
});
