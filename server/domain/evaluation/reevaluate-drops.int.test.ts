// Re-evaluating a processed delivery (the deliveries page) writes no drop twice: not the
// superseded rule's, not a duplicate's, and the run the delivery itself created is no duplicate
// of itself. Through the real route, the re-evaluate service and the evaluation job's function.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-reevaluation-tests";

const { getDb } = await import("@/server/db");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { branchPush, failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { reevaluateDelivery } = await import("@/server/domain/deliveries/reevaluate");
const { deliver } = await import("./fixtures/harness");
const { evaluateDelivery } = await import("./evaluate");

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

const job = (repo: string, seed: string) => failedWorkflowJob({ repo, runId: 601, jobId: 60101, jobName: "test", step: "Run npm test", headSha: sha(seed), headBranch: "main" });

describe("re-evaluating a delivery", () => {
  it("adds no drop row, run event or run however often a processed delivery is evaluated again", async () => {
    const admin = await createUser({ isAdmin: true });
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "any failure" });
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "tests", job: "test" });
    await deliver(db, branchPush({ repo: repo.fullName, branch: "main", sha: sha("re-eval") }));
    const first = await deliver(db, job(repo.fullName, "re-eval"));
    expect(first.created).toHaveLength(1);
    const second = await deliver(db, job(repo.fullName, "re-eval"));
    expect(second.outcome).toBe("duplicate");
    const runId = first.created[0]!.runId;

    const snapshot = async () => ({
      first: (await db.triggerDrop.findMany({ where: { deliveryId: first.deliveryId }, orderBy: { createdAt: "asc" } })).map((d) => [d.dedupeKey, d.ruleId, d.runId]),
      second: (await db.triggerDrop.findMany({ where: { deliveryId: second.deliveryId }, orderBy: { createdAt: "asc" } })).map((d) => [d.dedupeKey, d.ruleId, d.runId]),
      events: await db.runEvent.count({ where: { runId } }),
      runs: await db.agentDispatchRun.count({ where: { repositoryId: repo.id } }),
    });
    const before = await snapshot();
    // The first delivery: one superseded rule, no duplicate; the second: the superseded rule again and one duplicate.
    expect(before.first).toHaveLength(1);
    expect(before.second).toHaveLength(2);

    for (let i = 0; i < 3; i++) {
      for (const { deliveryId } of [first, second]) {
        await reevaluateDelivery({ db, actor: admin, deliveryId });
        const again = await evaluateDelivery({ db, deliveryId });
        expect(again).toMatchObject({ outcome: "duplicate", created: [] });
      }
    }
    expect(await snapshot()).toEqual(before);
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: first.deliveryId } })).toMatchObject({ reevaluations: 3, outcome: "duplicate" });
  });
});
