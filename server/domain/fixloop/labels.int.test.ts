// The escalation's label flip reaches the forge: the escalation (and "re-open for agents") flips
// Airlock's copy in its transaction and enqueues "fixloop.labels"; that job, run from the queued
// payload, flips the labels on GitHub (the fake GitHub, GitHub's shapes) or on the local forge's
// PR record, and a retried job changes nothing twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-label-tests";

const { getDb } = await import("@/server/db");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, sha } = await import("../ingest/fixtures/world");
const { reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver } = await import("../ingest/fixtures/harness");
const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { forgeResolver } = await import("../writebacks/forges");
const { startFakeGithub } = await import("@/server/forges/github/testing/fake-github");
const { jobs } = await import("@/server/queue/jobs");
const { escalateFixLoop } = await import("./escalate");
const { reopenForAgents } = await import("./reopen");
const { flipLabelsOnForge } = await import("./labels");

const db = getDb();
let gh: Awaited<ReturnType<typeof startFakeGithub>>;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const forgeFor = () => forgeResolver(db, { dataDir: "/nonexistent/airlock-labels-test", ciTimeoutMs: 1000, githubToken: gh.token, githubApiUrl: gh.url });

/** The queued "fixloop.labels" payloads for a PR, oldest first. */
async function labelJobs(pullRequestId: string) {
  const rows = await db.$queryRaw<{ payload: unknown; queue: string | null }[]>`
    SELECT j.payload, q.queue_name AS queue FROM graphile_worker._private_jobs j
    JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
    WHERE t.identifier = 'fixloop.labels' AND j.payload->>'pullRequestId' = ${pullRequestId} ORDER BY j.id`;
  return rows.map((r) => ({ payload: jobs["fixloop.labels"].parse(r.payload), queue: r.queue }));
}

let reviewId = 700_000;
async function escalatedPullRequest(forge: "github" | "local") {
  const repo = await createRepository();
  await db.repository.update({ where: { id: repo.id }, data: { forge, maxFixAttempts: 0, agentReadyLabel: "agents-go", humanReadyLabel: "humans-now" } });
  const stack = await createStack(scriptedSpec());
  const pr = await createPullRequest(db, { repositoryId: repo.id, number: 7, headSha: sha("pr-7"), headRef: "agent/fix" });
  await db.pullRequest.update({ where: { id: pr.id }, data: { labels: ["agents-go", "bug"] } });
  const author = await createExecRun({ repositoryId: repo.id, stack, sha: sha("pr-7") });
  await db.agentDispatchRun.update({ where: { id: author.id }, data: { status: "succeeded", pullRequestId: pr.id, headBranch: "agent/fix" } });
  await db.writeBack.create({
    data: {
      runId: author.id,
      kind: "update_pr_branch",
      actor: "tester",
      stackDigest: author.stackDigest,
      contextDigest: author.contextDigest,
      promptHash: author.promptHash,
      target: { repository: repo.fullName, branch: "agent/fix", prNumber: 7 },
      idempotencyKey: `wb_${author.id}`,
      outcome: "succeeded",
    },
  });
  const review = reviewSubmitted({ repo: repo.fullName, number: 7, state: "changes_requested", login: "reviewer-person", headSha: sha("pr-7") });
  Object.assign((review.payload as { review: Record<string, unknown> }).review, { id: ++reviewId, body: "still wrong" });
  await deliver(db, review);
  const escalation = await db.fixSpawnIntent.findFirstOrThrow({ where: { repositoryId: repo.id, kind: "escalate" } });
  const done = await escalateFixLoop({ db, intentId: escalation.id, notify: async () => ({ id: "n", created: true }) });
  expect(done.kind).toBe("escalated");
  return { repo, pr };
}

describe("the escalation's label flip on the forge", () => {
  it("on GitHub: the queued job flips ready-for-agent to ready-for-human, idempotently, and re-open flips it back", async () => {
    const { repo, pr } = await escalatedPullRequest("github");
    gh.createRepository(repo.fullName, { branch: "main", files: { "README.md": "x\n" }, pulls: [7] });
    gh.setIssueLabels(repo.fullName, 7, ["agents-go", "bug"]);
    // Airlock's copy flipped with the escalation; GitHub's waits for the job.
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).labels).toEqual(["bug", "humans-now"]);
    const [job, ...more] = await labelJobs(pr.id);
    expect(more).toHaveLength(0);
    expect(job).toEqual({ payload: { pullRequestId: pr.id, add: ["humans-now"], remove: ["agents-go"] }, queue: `fixloop-labels:${pr.id}` });

    // A person adds a label on GitHub before the job runs: GitHub's answer is kept.
    gh.setIssueLabels(repo.fullName, 7, ["agents-go", "bug", "needs-design"]);
    expect(await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload })).toEqual({ labels: ["bug", "needs-design", "humans-now"] });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "humans-now"]);
    // The job retried (its worker died after the call): the absent label's 404 counts as done.
    await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "humans-now"]);
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).labels).toEqual(["bug", "needs-design", "humans-now"]);

    const maintainer = await createUser();
    await reopenForAgents({ db, actor: { userId: maintainer.id, label: maintainer.email }, repositoryId: repo.id, branch: "agent/fix" });
    const back = (await labelJobs(pr.id)).at(-1)!;
    expect(back).toEqual({ payload: { pullRequestId: pr.id, add: ["agents-go"], remove: ["humans-now"] }, queue: `fixloop-labels:${pr.id}` });
    await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: back.payload });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "agents-go"]);
  });

  it("on GitHub, a refusal fails the job (the queue retries it) and leaves the labels as they were", async () => {
    const { repo, pr } = await escalatedPullRequest("github");
    gh.createRepository(repo.fullName, { branch: "main", files: { "README.md": "x\n" }, pulls: [7] });
    gh.setIssueLabels(repo.fullName, 7, ["agents-go"]);
    const [job] = await labelJobs(pr.id);
    gh.intercept((r) => (r.path.includes("/labels") ? { status: 403, body: { message: "Resource not accessible by integration" } } : undefined));
    try {
      await expect(flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload })).rejects.toMatchObject({ name: "ForgeError", message: expect.stringContaining("403") });
    } finally {
      gh.intercept(null);
    }
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["agents-go"]);
    await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["humans-now"]);
  });

  it("on the local forge the PR record is the forge's copy: the job flips it, once", async () => {
    const { pr } = await escalatedPullRequest("local");
    const [job] = await labelJobs(pr.id);
    // As if the flip had not reached the record yet (the job is what the forge executes).
    await db.pullRequest.update({ where: { id: pr.id }, data: { labels: ["agents-go", "bug", "agents-go"] } });
    expect(await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload })).toEqual({ labels: ["bug", "humans-now"] });
    expect(await flipLabelsOnForge({ db, forgeFor: forgeFor(), flip: job!.payload })).toEqual({ labels: ["bug", "humans-now"] });
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).labels).toEqual(["bug", "humans-now"]);
  });
});
