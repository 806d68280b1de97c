// The escalation's label flip is a write-back like any other: the escalation asks the change gate
// for a set_labels write-back (held for approval unless exempt), Airlock's copy of the PR keeps
// showing the forge's labels until it executes, approving it flips the labels on the forge (the
// fake GitHub in GitHub's shapes, or the local forge's PR record) and stores the forge's answer,
// a retried execution changes nothing twice, a rejected flip changes nothing, and "re-open for
// agents" flips back as the maintainer's own recorded write-back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-label-tests";

const { getDb } = await import("@/server/db");
const { callerFor, createEngagedPullRequest, createRepository, createUser } = await import("@/server/testing/factories");
const { sha } = await import("../ingest/fixtures/world");
const { reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver } = await import("@/server/domain/evaluation/fixtures/harness");
const { forgeResolver } = await import("../writebacks/forges");
const { executeWriteBack } = await import("../writebacks/execute");
const { startFakeGithub } = await import("@/server/forges/github/testing/fake-github");
const { escalateFixLoop } = await import("./escalate");
const { reopenForAgents } = await import("./reopen");
const { getFixLoop } = await import("./presenter");

const db = getDb();
let gh: Awaited<ReturnType<typeof startFakeGithub>>;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const forgeFor = () => forgeResolver(db, { dataDir: "/nonexistent/airlock-labels-test", ciTimeoutMs: 1000, githubToken: gh.token, githubApiUrl: gh.url });
const labelsOf = async (id: string) => (await db.pullRequest.findUniqueOrThrow({ where: { id } })).labels;

/** The queued write-back executions of one approval or write-back, with their queue. */
async function executions(key: string) {
  return db.$queryRaw<{ queue: string | null }[]>`
    SELECT q.queue_name AS queue FROM graphile_worker._private_jobs j
    LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
    WHERE j.key = ${`writeback:${key}`}`;
}

let reviewId = 700_000;
async function escalatedPullRequest(forge: "github" | "local", opts: { exempt?: boolean; onForge?: (fullName: string) => void } = {}) {
  const repo = await createRepository();
  await db.repository.update({
    where: { id: repo.id },
    data: { forge, maxFixAttempts: 0, agentReadyLabel: "agents-go", humanReadyLabel: "humans-now", ...(opts.exempt ? { writeBackExceptions: ["set_labels"] } : {}) },
  });
  opts.onForge?.(repo.fullName);
  const maintainer = await createUser();
  await db.membership.create({ data: { userId: maintainer.id, repositoryId: repo.id, role: "maintainer" } });
  const { pr, author } = await createEngagedPullRequest({
    repository: repo,
    headRef: "agent/fix",
    ...(opts.exempt ? { stack: { approvalMode: "exceptions_allowed" } } : {}),
  });
  await db.pullRequest.update({ where: { id: pr.id }, data: { labels: ["agents-go", "bug"] } });
  const review = reviewSubmitted({ repo: repo.fullName, number: 7, state: "changes_requested", login: "reviewer-person", headSha: sha("pr-7") });
  Object.assign((review.payload as { review: Record<string, unknown> }).review, { id: ++reviewId, body: "still wrong" });
  await deliver(db, review);
  const escalation = await db.fixSpawnIntent.findFirstOrThrow({ where: { repositoryId: repo.id, kind: "escalate" } });
  const done = await escalateFixLoop({ db, intentId: escalation.id, notify: async () => ({ id: "n", created: true }) });
  if (done.kind !== "escalated" || !done.labels) throw new Error(`not escalated with a label flip: ${JSON.stringify(done)}`);
  return { repo, pr, author, maintainer, flip: done.labels };
}

/** An escalated PR on GitHub whose approved flip GitHub refused (403): the write-back failed. */
async function failedFlipOnGithub() {
  const escalated = await escalatedPullRequest("github", {
    onForge: (fullName) => {
      gh.createRepository(fullName, { branch: "main", files: { "README.md": "x\n" }, pulls: [7] });
      gh.setIssueLabels(fullName, 7, ["agents-go"]);
    },
  });
  const { writeBackId } = await callerFor(escalated.maintainer).approvals.approve({ approvalId: escalated.flip.approvalId!, artifactDigest: null, headSha: null });
  if (!writeBackId) throw new Error("a label approval records a write-back");
  gh.intercept((r) => (r.path.includes("/labels") ? { status: 403, body: { message: "Resource not accessible by integration" } } : undefined));
  try {
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId })).toMatchObject({ outcome: "failed" });
  } finally {
    gh.intercept(null);
  }
  return { ...escalated, writeBackId };
}

describe("the escalation's label flip through the change gate", () => {
  it("is held for approval; approved, it flips the labels on GitHub once, even when its execution is retried, and re-open flips them back", async () => {
    const { repo, pr, maintainer, flip } = await escalatedPullRequest("github", {
      onForge: (fullName) => {
        gh.createRepository(fullName, { branch: "main", files: { "README.md": "x\n" }, pulls: [7] });
        gh.setIssueLabels(fullName, 7, ["agents-go", "bug"]);
      },
    });
    // Pending: nothing changed anywhere yet, and Airlock's copy shows the truth.
    expect(flip.writeBackId).toBeNull();
    const approval = await db.approvalRequest.findUniqueOrThrow({ where: { id: flip.approvalId! } });
    expect(approval).toMatchObject({ action: "set_labels", status: "pending", targetPrNumber: 7, targetBranch: "agent/fix", targetHeadSha: null, artifactId: null });
    expect(approval.presented).toMatchObject({ action: "set_labels", labels: { add: ["humans-now"], remove: ["agents-go"] }, target: { repository: repo.fullName, prNumber: 7 } });
    expect(await db.policyDecision.findUniqueOrThrow({ where: { id: approval.policyDecisionId! } })).toMatchObject({ ruleName: "stack_requires_approval" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["agents-go", "bug"]);
    expect(await labelsOf(pr.id)).toEqual(["agents-go", "bug"]);
    expect(await db.writeBack.count({ where: { kind: "set_labels", run: { repositoryId: repo.id } } })).toBe(0);
    // The rounds view shows the truth and the pending flip beside it.
    expect(await getFixLoop({ db, repositoryId: repo.id, branch: "agent/fix" })).toMatchObject({
      pullRequest: { number: 7, labels: ["agents-go", "bug"] },
      labelFlip: { approvalId: approval.id, status: "pending", change: { prNumber: 7, add: ["humans-now"], remove: ["agents-go"] } },
    });

    const { writeBackId } = await callerFor(maintainer).approvals.approve({ approvalId: approval.id, artifactDigest: null, headSha: null });
    if (!writeBackId) throw new Error("a label approval records a write-back");
    expect(await executions(approval.id)).toEqual([{ queue: `labels:${repo.fullName}#7` }]);
    // A person labels the PR on GitHub before the execution: GitHub's answer is what Airlock keeps.
    gh.setIssueLabels(repo.fullName, 7, ["agents-go", "bug", "needs-design"]);
    // The worker dies after the forge call, before the record: the retry asks again and changes nothing twice.
    await expect(
      executeWriteBack({
        db,
        forgeFor: forgeFor(),
        approvalId: approval.id,
        afterForgeCall: () => {
          throw new Error("worker killed");
        },
      }),
    ).rejects.toThrow("worker killed");
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "humans-now"]);
    expect(await db.writeBack.findUniqueOrThrow({ where: { id: writeBackId } })).toMatchObject({ outcome: "pending" });
    const done = await executeWriteBack({ db, forgeFor: forgeFor(), approvalId: approval.id });
    expect(done).toMatchObject({ writeBackId, outcome: "succeeded", externalRef: "#7: bug, needs-design, humans-now" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "humans-now"]);
    expect(await labelsOf(pr.id)).toEqual(["bug", "needs-design", "humans-now"]);
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), approvalId: approval.id })).toMatchObject({ outcome: "already_recorded" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approval.id } })).toMatchObject({ status: "executed" });
    expect(await getFixLoop({ db, repositoryId: repo.id, branch: "agent/fix" })).toMatchObject({ pullRequest: { labels: ["bug", "needs-design", "humans-now"] }, labelFlip: { status: "executed" } });
    expect(await db.writeBack.findUniqueOrThrow({ where: { id: writeBackId } })).toMatchObject({ kind: "set_labels", approvedBy: maintainer.email, outcome: "succeeded" });
    const completed = await db.runEvent.findMany({ where: { type: "write_back_completed", runId: approval.runId } });
    expect(completed.map((e) => e.payload)).toEqual([expect.objectContaining({ writeBackId, action: "set_labels", outcome: "succeeded" })]);

    // Re-open: the maintainer's own action, recorded as a write-back they approved, no approval request.
    const reopened = await reopenForAgents({ db, actor: { userId: maintainer.id, label: maintainer.email }, repositoryId: repo.id, branch: "agent/fix" });
    expect(await db.approvalRequest.count({ where: { action: "set_labels", run: { repositoryId: repo.id } } })).toBe(1);
    const back = await db.writeBack.findUniqueOrThrow({ where: { id: reopened.labelWriteBackId! } });
    expect(back).toMatchObject({ kind: "set_labels", approvalId: null, approvedBy: maintainer.email, outcome: "pending", target: expect.objectContaining({ labels: { add: ["agents-go"], remove: ["humans-now"] } }) });
    expect(await executions(back.id)).toEqual([{ queue: `labels:${repo.fullName}#7` }]);
    expect(await db.auditEntry.findFirstOrThrow({ where: { action: "fixloop.reopen", repositoryId: repo.id } })).toMatchObject({ detail: expect.objectContaining({ labelWriteBackId: back.id }) });
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId: back.id })).toMatchObject({ outcome: "succeeded" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["bug", "needs-design", "agents-go"]);
    expect(await labelsOf(pr.id)).toEqual(["bug", "needs-design", "agents-go"]);
  });

  it("a rejected flip leaves the labels as they were on the forge and in Airlock, and starts no fix run", async () => {
    const { repo, pr, maintainer, flip } = await escalatedPullRequest("local");
    const fixIntents = await db.fixSpawnIntent.count({ where: { repositoryId: repo.id, kind: "fix" } });
    await callerFor(maintainer).approvals.reject({ approvalId: flip.approvalId!, reason: "keep it with the agents for now" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: flip.approvalId! } })).toMatchObject({ status: "rejected" });
    expect(await db.writeBack.count({ where: { approvalId: flip.approvalId! } })).toBe(0);
    expect(await executions(flip.approvalId!)).toEqual([]);
    await expect(executeWriteBack({ db, forgeFor: forgeFor(), approvalId: flip.approvalId! })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await labelsOf(pr.id)).toEqual(["agents-go", "bug"]);
    expect(await db.fixSpawnIntent.count({ where: { repositoryId: repo.id, kind: "fix" } })).toBe(fixIntents);
  });

  it("exempt by the repository (and a stack that allows exceptions): no approval, the flip executes on the local forge's PR record", async () => {
    const { repo, pr, flip } = await escalatedPullRequest("local", { exempt: true });
    expect(flip.approvalId).toBeNull();
    expect(await db.approvalRequest.count({ where: { action: "set_labels", run: { repositoryId: repo.id } } })).toBe(0);
    const wb = await db.writeBack.findUniqueOrThrow({ where: { id: flip.writeBackId! } });
    expect(wb).toMatchObject({ kind: "set_labels", approvedBy: null, outcome: "pending", target: expect.objectContaining({ prNumber: 7, labels: { add: ["humans-now"], remove: ["agents-go"] } }) });
    expect(await db.policyDecision.findUniqueOrThrow({ where: { id: (wb.target as { policyDecisionId: string }).policyDecisionId } })).toMatchObject({ ruleName: "exempted_write_back_proceeds" });
    expect(await db.auditEntry.count({ where: { action: "writeback.exempt", objectId: wb.id } })).toBe(1);
    expect(await labelsOf(pr.id)).toEqual(["agents-go", "bug"]);
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId: wb.id })).toMatchObject({ outcome: "succeeded", externalRef: "#7: bug, humans-now" });
    expect(await labelsOf(pr.id)).toEqual(["bug", "humans-now"]);
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId: wb.id })).toMatchObject({ outcome: "already_recorded" });
    expect(await labelsOf(pr.id)).toEqual(["bug", "humans-now"]);
  });

  it("a forge refusal records the flip failed with GitHub's error and the labels unchanged; a maintainer's retry applies it", async () => {
    const { repo, pr, maintainer, flip, writeBackId } = await failedFlipOnGithub();
    expect(await db.writeBack.findUniqueOrThrow({ where: { id: writeBackId } })).toMatchObject({ outcome: "failed", error: expect.stringContaining("403") });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: flip.approvalId! } })).toMatchObject({ status: "failed" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["agents-go"]);
    expect(await labelsOf(pr.id)).toEqual(["agents-go", "bug"]);
    await callerFor(maintainer).approvals.retryWriteBack({ writeBackId });
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId })).toMatchObject({ outcome: "succeeded" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["humans-now"]);
    expect(await labelsOf(pr.id)).toEqual(["humans-now"]);
  });

  it("a failed escalation flip cannot be retried once the PR was re-opened for agents: the later flip supersedes it", async () => {
    const { repo, maintainer, writeBackId } = await failedFlipOnGithub();
    await reopenForAgents({ db, actor: { userId: maintainer.id, label: maintainer.email }, repositoryId: repo.id, branch: "agent/fix" });
    await expect(callerFor(maintainer).approvals.retryWriteBack({ writeBackId })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("supersedes") });
    expect(await db.writeBack.findUniqueOrThrow({ where: { id: writeBackId } })).toMatchObject({ outcome: "failed" });
    expect(gh.labelsOn(repo.fullName, 7)).toEqual(["agents-go"]);
  });

  it("re-opening while the flip still awaits approval withdraws it, so it can never hand the PR back to a person", async () => {
    const { repo, pr, maintainer, flip } = await escalatedPullRequest("local");
    const { labelWriteBackId } = await reopenForAgents({ db, actor: { userId: maintainer.id, label: maintainer.email }, repositoryId: repo.id, branch: "agent/fix" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: flip.approvalId! } })).toMatchObject({ status: "expired", reason: expect.stringContaining("withdrawn") });
    await expect(callerFor(maintainer).approvals.approve({ approvalId: flip.approvalId!, artifactDigest: null, headSha: null })).rejects.toMatchObject({ code: "CONFLICT" });
    // The flip back is idempotent against a forge that never flipped: nothing changes.
    expect(await executeWriteBack({ db, forgeFor: forgeFor(), writeBackId: labelWriteBackId! })).toMatchObject({ outcome: "succeeded" });
    expect(await labelsOf(pr.id)).toEqual(["agents-go", "bug"]);
  });
});
