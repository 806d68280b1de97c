// Evaluation of recorded deliveries against a real database: dedupe under redelivery storms,
// idempotent retries, forks, local CI, auto-run, and the CI records deliveries keep up to date.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-evaluate-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { getRunDetail } = await import("@/server/domain/use-cases/run-detail");
const { createPullRequest, createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedCheckRun, failedWorkflowJob, pullRequestEvent, reviewSubmitted } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS, localFailedCheck } = await import("@/server/domain/ingest/fixtures/local-events");
const { deliver, evaluateAll, eventTypes, post } = await import("./fixtures/harness");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { evaluateDelivery } = await import("./evaluate");

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

async function world(opts: { autoRun?: boolean; ruleAction?: "suggest" | "auto_run" } = {}) {
  const repo = await createRepository();
  if (opts.autoRun) await db.repository.update({ where: { id: repo.id }, data: { autoRunOnFailedCheck: true } });
  const rule = await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, action: opts.ruleAction });
  return { repo, rule };
}

const dispatchJobs = async (runId: string) => {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'run.dispatch' AND j.payload->>'runId' = ${runId}`;
  return rows[0]?.n ?? 0;
};

describe("redelivery storms", () => {
  it("turns 20 different deliveries of one failure into one run and 19 drops that name it", async () => {
    const { repo, rule } = await world();
    const headSha = sha("storm");
    await createPullRequest(db, { repositoryId: repo.id, number: 12, headSha, headRef: "feature/storm", isFork: false });
    const failure = failedWorkflowJob({ repo: repo.fullName, runId: 77, jobId: 7701, jobName: "test", step: "Run npm test", headSha, headBranch: "feature/storm" });
    const posted = await Promise.all(Array.from({ length: 20 }, (_, i) => post(failure, `storm-${repo.id}-${i}`)));
    expect(posted.map((p) => p.status)).toEqual(Array(20).fill(202));

    await evaluateAll(db, posted.map((p) => p.deliveryId));

    const runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id } });
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run).toMatchObject({ source: "failed_check", status: "suggested", triggerRuleId: rule.id, headSha, isFork: false, title: "Diagnose test failure on PR #12" });
    const drops = await db.triggerDrop.findMany({ where: { runId: run.id } });
    expect(drops).toHaveLength(19);
    expect(new Set(drops.map((d) => d.deliveryId)).size).toBe(19);
    expect(drops.every((d) => d.dedupeKey === run.dedupeKey && d.ruleId === rule.id && d.reason.includes(`run #${run.number}`))).toBe(true);
    // The contract the run page relies on.
    expect((await getRunDetail({ db, runId: run.id, viewerRole: "admin" })).duplicateTriggersDropped).toBe(19);
    const outcomes = await db.webhookDelivery.groupBy({ by: ["outcome"], where: { deliveryId: { in: posted.map((p) => p.deliveryId) } }, _count: true });
    expect(Object.fromEntries(outcomes.map((o) => [o.outcome, o._count]))).toEqual({ processed: 1, duplicate: 19 });
    const types = await eventTypes(db, run.id);
    expect(types.slice(0, 3)).toEqual(["trigger_matched", "context_assembled", "status"]);
    expect(types.filter((t) => t === "dispatch_skipped")).toHaveLength(19);
  });

  it("skips a delivery that was already processed, so a retried job creates nothing twice", async () => {
    const { repo } = await world();
    const d = failedWorkflowJob({ repo: repo.fullName, runId: 78, jobId: 7801, jobName: "lint", step: "Run eslint", headSha: sha("retry"), headBranch: "main" });
    const first = await deliver(db, d);
    expect(first.created).toHaveLength(1);
    const again = await evaluateDelivery({ db, deliveryId: first.deliveryId });
    expect(again.outcome).toBe("skipped");
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repo.id } })).toBe(1);
    expect(await db.triggerDrop.count({ where: { deliveryId: first.deliveryId } })).toBe(0);
  });
});

describe("forks and trust", () => {
  it("marks a fork PR's failed check and gives its context no secrets", async () => {
    const { repo } = await world();
    const headSha = sha("fork");
    await createPullRequest(db, { repositoryId: repo.id, number: 15, headSha, headRef: "patch-1", isFork: true });
    // GitHub's fork check suite: no head branch, no linked pull request.
    const result = await deliver(db, failedCheckRun({ repo: repo.fullName, suiteId: 15001, checkRunId: 15002, name: "typecheck", headSha, headBranch: null }));
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run.isFork).toBe(true);
    expect(run.title).toBe("Diagnose typecheck failure on fork PR #15");
    const bundle = run.contextBundle as { ref: { isFork: boolean }; policy: { secrets: string }; contextLabels: { name: string }[]; pullRequest: { number: number } };
    expect(bundle.ref.isFork).toBe(true);
    expect(bundle.policy.secrets).toBe("none");
    expect(bundle.contextLabels[0]?.name).toBe("untrusted-input");
    expect(bundle.pullRequest.number).toBe(15);
  });

  it("treats a job whose fork status is unknown as a fork", async () => {
    const { repo } = await world();
    const result = await deliver(db, failedWorkflowJob({ repo: repo.fullName, runId: 79, jobId: 7901, jobName: "test", step: "Run npm test", headSha: sha("unknown-fork"), headBranch: "x" }));
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run.isFork).toBe(true);
    expect((run.contextBundle as { ref: { isFork: boolean | null } }).ref.isFork).toBeNull();
  });
});

describe("local CI and policy", () => {
  it("stores the failed job's excerpt and signature and gives the run the log", async () => {
    const { repo } = await world();
    const headSha = sha("local");
    const ingested = await ingestCiEvent({ db, event: localFailedCheck({ repo: repo.fullName, headSha, headBranch: "main", runId: "local-ci-1" }), log: LOGS.vitestA, changedFiles: ["src/lib/date.ts"] });
    expect(ingested.status).toBe("accepted");
    expect((await ingestCiEvent({ db, event: localFailedCheck({ repo: repo.fullName, headSha, headBranch: "main", runId: "local-ci-1" }), deliveryId: ingested.deliveryId })).status).toBe("duplicate");
    const result = await evaluateDelivery({ db, deliveryId: ingested.deliveryId });
    const job = await db.job.findFirstOrThrow({ where: { pipeline: { repositoryId: repo.id, externalId: "local-ci-1" } } });
    expect(job.failureSignature).toMatch(/^[0-9a-f]{16}$/);
    expect(job.failingTests.length).toBeGreaterThan(0);
    expect(job.logExcerpt).toContain("formats yesterday");
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run).toMatchObject({ jobId: job.id, pipelineId: job.pipelineId, isFork: false });
    const bundle = run.contextBundle as { logs: { excerpt: string }[]; failure: { signature: string }; job: { name: string; step: string } };
    expect(bundle.logs[0]?.excerpt).toContain("formats yesterday");
    expect(bundle.failure.signature).toBe(job.failureSignature);
    expect(bundle.job).toMatchObject({ name: "test", step: "Run npm test" });
    expect(run.prompt).toContain(job.failureSignature!);
    expect(run.promptHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("auto-runs a failed check only when both the rule and the repository allow it", async () => {
    for (const [autoRun, ruleAction, expected] of [
      [true, "auto_run", "queued"],
      [false, "auto_run", "suggested"],
      [true, "suggest", "suggested"],
    ] as const) {
      const { repo } = await world({ autoRun, ruleAction });
      const result = await deliver(db, failedWorkflowJob({ repo: repo.fullName, runId: 80, jobId: 8001, jobName: "test", step: "Run npm test", headSha: sha(`auto-${autoRun}-${ruleAction}`), headBranch: "main" }));
      const runId = result.created[0]!.runId;
      expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe(expected);
      expect(await dispatchJobs(runId)).toBe(expected === "queued" ? 1 : 0);
    }
  });
});

describe("pull request records", () => {
  it("upserts the PR on opened and synchronize, and stores a submitted review's state", async () => {
    const { repo } = await world();
    const base = { repo: repo.fullName, number: 31, title: "Relative dates", body: "Formats dates.", headRef: "dates", labels: ["ui"] };
    const opened = await deliver(db, pullRequestEvent({ ...base, action: "opened", headSha: sha("pr-a") }));
    expect(opened.outcome).toBe("processed");
    let pr = await db.pullRequest.findUniqueOrThrow({ where: { repositoryId_number: { repositoryId: repo.id, number: 31 } } });
    expect(pr).toMatchObject({ title: "Relative dates", body: "Formats dates.", headSha: sha("pr-a"), headRef: "dates", baseRef: "main", isFork: false, labels: ["ui"] });
    await deliver(db, pullRequestEvent({ ...base, action: "synchronize", headSha: sha("pr-b"), fork: true }));
    pr = await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } });
    expect(pr).toMatchObject({ headSha: sha("pr-b"), isFork: true, headRepoFullName: expect.stringMatching(/^contributor\//) });
    const review = await deliver(db, reviewSubmitted({ repo: repo.fullName, number: 31, state: "changes_requested", login: "reviewer", headSha: sha("pr-b") }));
    expect(review.detail).toContain("review (changes_requested) on #31 stored");
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).reviewState).toBe("changes_requested");
  });

  it("ignores deliveries for repositories Airlock does not know", async () => {
    const result = await deliver(db, failedWorkflowJob({ repo: "someone/else", runId: 1, jobId: 2, jobName: "t", step: "s", headSha: sha("else"), headBranch: "main" }));
    expect(result).toMatchObject({ outcome: "ignored", detail: "repository someone/else is not registered in Airlock" });
  });
});
