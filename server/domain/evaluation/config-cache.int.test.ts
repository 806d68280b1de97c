// The worker's cached rule sets and repositories (config-cache.ts) are never stale: every change to
// TriggerRule or Repository bumps the configuration's generation in its own transaction, the
// delivery's read carries the generation, and a rule edited or a repository registered, disabled or
// changed (from another process: a second client) takes effect for the next delivery.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-rule-cache-tests";

const { createPrismaClient, getDb } = await import("@/server/db");
const { requireDatabaseUrl } = await import("@/server/env");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { nextDeliveryId, post } = await import("./fixtures/harness");
const { evaluateDeliveryTask } = await import("@/server/queue/tasks/evaluate-delivery");
const { readDelivery } = await import("./evaluate");
const { cachedLiveRules } = await import("./config-cache");

const db = getDb();
// Another process's connection: the web process where a maintainer edits a rule.
const web = createPrismaClient(requireDatabaseUrl());
let stackId = "";
let serial = 0;
beforeAll(async () => {
  stackId = (await createStack(db)).id;
  // The counts below are of this file's rules only.
  expect(await db.triggerRule.count({ where: { repositoryId: null } })).toBe(0);
});
afterAll(async () => {
  await web.$disconnect();
});

const generation = async () => (await db.$queryRaw<{ g: string }[]>`SELECT "generation"::text AS g FROM "EvaluationConfigGeneration" WHERE "id" = 1`)[0]!.g;

/** A fresh failed job of `repo` through the real route and the real job handler; the runs it made. */
async function failure(repo: { id: string; fullName: string }, expectOutcome = "processed") {
  const n = serial++;
  const posted = await post(failedWorkflowJob({ repo: repo.fullName, runId: 5_000 + n, jobId: 6_000 + n, jobName: "test", step: "Run npm test", headSha: sha(`cache-${n}`), headBranch: "main" }), nextDeliveryId("cache"));
  expect(posted.status).toBe(202);
  await evaluateDeliveryTask({ deliveryId: posted.deliveryId }, { db });
  const row = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } });
  expect(row.processedAt).not.toBeNull();
  expect(row.outcome).toBe(expectOutcome);
  return db.agentDispatchRun.count({ where: { repositoryId: repo.id } });
}

describe("cached rule sets and repositories", () => {
  it("bump the generation on every change to a rule, and not on a change rolled back", async () => {
    const repo = await createRepository();
    const g0 = BigInt(await generation());
    const rule = await createRule(web, { kind: "failed_check", stackId, repositoryId: repo.id });
    const g1 = BigInt(await generation());
    expect(g1).toBeGreaterThan(g0);
    await web.triggerRule.update({ where: { id: rule.id }, data: { job: "lint" } });
    const g2 = BigInt(await generation());
    expect(g2).toBeGreaterThan(g1);
    await web.$transaction(async (tx) => {
      await tx.triggerRule.update({ where: { id: rule.id }, data: { job: "never" } });
      throw new Error("rolled back");
    }).catch(() => undefined);
    expect(BigInt(await generation())).toBe(g2);
    // A repository deleted takes its rules with it (the cascade bumps too).
    await web.repository.delete({ where: { id: repo.id } });
    expect(BigInt(await generation())).toBeGreaterThan(g2);
  });

  it("reads the generation with the delivery and serves the same rules until it moves", async () => {
    const repo = await createRepository();
    await createRule(web, { kind: "failed_check", stackId, repositoryId: repo.id });
    const posted = await post(failedWorkflowJob({ repo: repo.fullName, runId: 1, jobId: 2, jobName: "test", step: "s", headSha: sha("gen"), headBranch: "main" }), nextDeliveryId("gen"));
    const row = (await readDelivery(db, posted.deliveryId))!;
    expect(row.configGeneration).toBe(await generation());
    expect(row.source).toBe("github");
    const first = await cachedLiveRules(db, repo.id, row.configGeneration ?? null);
    expect(await cachedLiveRules(db, repo.id, row.configGeneration ?? null)).toBe(first);
    await createRule(web, { kind: "label", stackId, repositoryId: repo.id });
    const moved = await cachedLiveRules(db, repo.id, await generation());
    expect(moved).not.toBe(first);
    expect(moved.map((r) => r.kind).sort()).toEqual(["failed_check", "label"]);
  });

  it("apply a rule edited in another process to the next delivery evaluated", async () => {
    const repo = await createRepository();
    const rule = await createRule(web, { kind: "failed_check", stackId, repositoryId: repo.id, job: "test" });
    expect(await failure(repo)).toBe(1); // the cache now holds the rule
    expect(await failure(repo)).toBe(2); // served from the cache
    // Narrowed to another job: the very next failure of "test" makes no run.
    await web.triggerRule.update({ where: { id: rule.id }, data: { job: "deploy" } });
    expect(await failure(repo)).toBe(2);
    // Disabled, then a new rule: the next failure runs under the new rule only.
    await web.triggerRule.update({ where: { id: rule.id }, data: { enabled: false, job: "test" } });
    expect(await failure(repo)).toBe(2);
    const second = await createRule(web, { kind: "failed_check", stackId, repositoryId: repo.id, job: "test" });
    expect(await failure(repo)).toBe(3);
    // Deleted: gone for the next delivery.
    await web.triggerRule.delete({ where: { id: second.id } });
    expect(await failure(repo)).toBe(3);
  });

  it("apply a repository registered, disabled or re-enabled in another process to the next delivery", async () => {
    const repo = { id: "", fullName: `acme/late-${Date.now().toString(36)}` };
    expect(await failure(repo, "ignored")).toBe(0); // cached: no repository of that name
    const created = await web.repository.create({ data: { fullName: repo.fullName, cloneUrl: "https://example.test/late.git" } });
    repo.id = created.id;
    await createRule(web, { kind: "failed_check", stackId, repositoryId: repo.id });
    expect(await failure(repo)).toBe(1);
    await web.repository.update({ where: { id: repo.id }, data: { disabledAt: new Date(), disabledReason: "paused by a test", disabledBy: "admin" } });
    expect(await failure(repo, "ignored")).toBe(1);
    const detail = (await db.webhookDelivery.findFirstOrThrow({ where: { deliveryId: { startsWith: "cache" } }, orderBy: { receivedAt: "desc" } })).detail;
    expect(detail).toContain("disabled: paused by a test");
    await web.repository.update({ where: { id: repo.id }, data: { disabledAt: null, disabledReason: null, disabledBy: null } });
    expect(await failure(repo)).toBe(2);
  });
});
