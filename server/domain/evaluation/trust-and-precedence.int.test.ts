// Where a run's code comes from, which rule fires when several match one failure, and the
// context digest in the failed-check dedupe key, through the real route and evaluation.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-trust-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { getRunDetail } = await import("@/server/domain/use-cases/run-detail");
const { createPullRequest, createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { branchPush, failedWorkflowJob } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS, localFailedCheck } = await import("@/server/domain/ingest/fixtures/local-events");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { deliver, post, evaluateAll } = await import("./fixtures/harness");
const { evaluateDelivery } = await import("./evaluate");

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

const job = (repo: string, seed: string, extra: Partial<Parameters<typeof failedWorkflowJob>[0]> = {}) =>
  failedWorkflowJob({ repo, runId: 501, jobId: 50101, jobName: "test", step: "Run npm test", headSha: sha(seed), headBranch: "main", ...extra });

async function runOf(result: { created: { runId: string }[] }) {
  expect(result.created).toHaveLength(1);
  return db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
}

describe("code origin", () => {
  it("runs a workflow_job failure on main of a trusted repository trusted once its push was recorded, and says why", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id });
    const pushed = await deliver(db, branchPush({ repo: repo.fullName, branch: "main", sha: sha("main-push"), pusher: "maintainer" }));
    expect(pushed).toMatchObject({ outcome: "processed", created: [] });
    expect(pushed.detail).toContain(`push to main at ${sha("main-push").slice(0, 12)} recorded`);

    const run = await runOf(await deliver(db, job(repo.fullName, "main-push")));
    expect(run).toMatchObject({ isFork: false, origin: "repository", title: "Diagnose test failure on main" });
    expect(run.originReason).toBe(`${sha("main-push").slice(0, 12)} was pushed to the repository's branch main by maintainer`);
    const bundle = run.contextBundle as { ref: { isFork: boolean | null }; policy: { secrets: string }; contextLabels: { name: string }[] };
    expect(bundle.ref.isFork).toBe(false);
    expect(bundle.policy.secrets).toBe("granted");
    expect(bundle.contextLabels.map((l) => l.name)).not.toContain("untrusted-input");
  });

  it("keeps a workflow_job failure nobody can place untrusted, naming why", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id });
    const run = await runOf(await deliver(db, job(repo.fullName, "nowhere")));
    expect(run).toMatchObject({ isFork: true, origin: "unknown" });
    expect(run.originReason).toContain("names no head repository, and Airlock has seen neither a pull request");
    expect((run.contextBundle as { ref: { isFork: boolean | null } }).ref.isFork).toBeNull();
  });

  it("keeps a fork's head untrusted even when it calls its branch main and the same commit was pushed elsewhere", async () => {
    const repo = await createRepository();
    const other = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id });
    await createRule(db, { kind: "failed_check", stackId, repositoryId: other.id });
    // The fork's pull request is on record; the same commit was pushed to another repository
    // Airlock knows, and (later) to a branch of this one by a maintainer.
    await createPullRequest(db, { repositoryId: repo.id, number: 77, headSha: sha("fork-main"), headRef: "main", isFork: true });
    await deliver(db, branchPush({ repo: other.fullName, branch: "main", sha: sha("fork-main") }));
    const forkRun = await runOf(await deliver(db, job(repo.fullName, "fork-main")));
    expect(forkRun).toMatchObject({ isFork: true, origin: "fork", title: "Diagnose test failure on fork PR #77" });
    expect(forkRun.originReason).toMatch(/^pull request #77 comes from the fork /);

    // A push of another repository vouches for nothing here.
    const stranger = await runOf(await deliver(db, job(repo.fullName, "pushed-elsewhere", { runId: 502, jobId: 50201 })));
    await deliver(db, branchPush({ repo: other.fullName, branch: "main", sha: sha("pushed-elsewhere-2") }));
    expect(stranger.origin).toBe("unknown");
    const elsewhere = await runOf(await deliver(db, job(repo.fullName, "pushed-elsewhere-2", { runId: 503, jobId: 50301 })));
    expect(elsewhere).toMatchObject({ isFork: true, origin: "unknown" });
  });

  it("records a pushed commit once, and not for a deleted branch", async () => {
    const repo = await createRepository();
    await deliver(db, branchPush({ repo: repo.fullName, branch: "main", sha: sha("once"), pusher: "first" }));
    await deliver(db, branchPush({ repo: repo.fullName, branch: "release", sha: sha("once"), pusher: "second" }));
    // The route records a deleted branch as ignored: nothing is evaluated.
    const gone = await post(branchPush({ repo: repo.fullName, branch: "old", sha: sha("gone"), deleted: true }));
    expect(gone).toMatchObject({ status: 202, body: { status: "ignored" } });
    expect(await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: gone.deliveryId } })).toMatchObject({ outcome: "ignored", detail: "branch deleted" });
    const rows = await db.pushedCommit.findMany({ where: { repositoryId: repo.id } });
    expect(rows.map((r) => [r.sha, r.branch, r.pusher])).toEqual([[sha("once"), "main", "first"]]);
  });
});

describe("rule precedence", () => {
  it("makes one run when a global rule and the repository's rule both match, stores why, and lists the superseded rule on the run", async () => {
    const repo = await createRepository();
    const global = await createRule(db, { kind: "failed_check", stackId, name: `global-${repo.id}` });
    const own = await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "web CI" });
    try {
      await deliver(db, branchPush({ repo: repo.fullName, branch: "main", sha: sha("one-run") }));
      const result = await deliver(db, job(repo.fullName, "one-run"));
      const run = await runOf(result);
      expect(run.triggerRuleId).toBe(own.id);
      expect(result.detail).toContain(`rule ${global.name} superseded by rule "web CI": a repository's rule takes precedence over a rule for every repository`);
      const matched = await db.runEvent.findFirstOrThrow({ where: { runId: run.id, type: "trigger_matched" } });
      expect(matched.payload).toMatchObject({
        ruleId: own.id,
        precedence: {
          why: expect.stringContaining(`rule "web CI" wins over "${global.name}"`),
          competitors: [
            { ruleId: own.id, scope: "repository", outcome: "fires" },
            { ruleId: global.id, scope: "global", outcome: "superseded" },
          ],
        },
      });
      // A redelivery: one duplicate for the winner, the loser superseded again; still one run.
      const again = await deliver(db, job(repo.fullName, "one-run"));
      expect(again).toMatchObject({ outcome: "duplicate", created: [] });
      expect(await db.agentDispatchRun.count({ where: { repositoryId: repo.id } })).toBe(1);
      const detail = await getRunDetail({ db, runId: run.id, viewerRole: "viewer" });
      expect(detail.duplicateTriggersDropped).toBe(1);
      expect(detail.droppedTriggers.total).toBe(3);
      expect(detail.droppedTriggers.items.map((d) => [d.kind, d.deliveryId])).toEqual([
        ["superseded", again.deliveryId],
        ["duplicate", again.deliveryId],
        ["superseded", result.deliveryId],
      ]);
      expect(detail.droppedTriggers.items[1]?.delivery).toMatchObject({ source: "github", event: "workflow_job", action: "completed" });
    } finally {
      // Global rules reach every repository of this file's database.
      await db.triggerRule.delete({ where: { id: global.id } });
    }
  });

  it("fires both rules when a person set one to fire alongside", async () => {
    const repo = await createRepository();
    const also = await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "any failure" });
    await db.triggerRule.update({ where: { id: also.id }, data: { alsoFire: true } });
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "tests", job: "test" });
    const result = await deliver(db, job(repo.fullName, "both"));
    expect(result.created).toHaveLength(2);
    expect(await db.triggerDrop.count({ where: { deliveryId: result.deliveryId } })).toBe(0);
  });

  it("keeps a storm of one failure under two competing rules to one run", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "any" });
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, name: "tests", job: "test" });
    const posted = await Promise.all(Array.from({ length: 12 }, (_, i) => post(job(repo.fullName, "storm"), `prec-storm-${repo.id}-${i}`)));
    await evaluateAll(db, posted.map((p) => p.deliveryId));
    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id } });
    expect(runs).toHaveLength(1);
    const drops = await db.triggerDrop.findMany({ where: { runId: runs[0]!.id } });
    expect(drops.filter((d) => d.dedupeKey === runs[0]!.dedupeKey)).toHaveLength(11);
    expect(drops.filter((d) => d.dedupeKey !== runs[0]!.dedupeKey)).toHaveLength(12);
  });
});

describe("the context digest in the failed-check key", () => {
  const local = (repo: string, runId: string) => localFailedCheck({ repo, headSha: sha(`ctx-${repo}`), headBranch: "main", runId, jobId: "job-1" });

  it("drops a rerun that fails with the same output, and makes a run for the same job failing differently at the same commit", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id });
    const evaluate = async (runId: string, log: string) => {
      const { deliveryId } = await ingestCiEvent({ db, event: local(repo.fullName, runId), log });
      return evaluateDelivery({ db, deliveryId });
    };
    const first = await evaluate("ci-1", LOGS.vitestA);
    expect(first.created).toHaveLength(1);
    // The same failure again: only times and durations differ, which the digest normalises away.
    const churn = LOGS.vitestA.replace(/\d+ms/g, "987ms").replace(/\d\d:\d\d:\d\d/g, "23:59:01");
    expect(churn).not.toBe(LOGS.vitestA);
    expect((await evaluate("ci-2", churn)).outcome).toBe("duplicate");
    // Same job, step, signature and commit, but the output says more: another context.
    const more = `${LOGS.vitestA}\nnote: snapshot store was restored from a stale cache key\n`;
    const second = await evaluate("ci-3", more);
    expect(second.created).toHaveLength(1);
    const [a, b] = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id }, orderBy: { number: "asc" } });
    expect(a!.dedupeKey.split(":").slice(0, 6)).toEqual(b!.dedupeKey.split(":").slice(0, 6));
    expect(a!.dedupeKey.split(":")[7]).not.toBe(b!.dedupeKey.split(":")[7]);
  });
});
