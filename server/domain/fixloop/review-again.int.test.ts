// A fix run ends by asking for review again: its patch, approved and pushed through the real
// write-back path on the local forge, queues "fixloop.review", which marks the PR record; on
// GitHub (the fake GitHub) the reviewer whose changes-requested review started the fix is asked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-review-again-tests";

const { getDb, transaction } = await import("@/server/db");
const { callerFor, createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, sha } = await import("../ingest/fixtures/world");
const { reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver } = await import("@/server/domain/evaluation/fixtures/harness");
const { calcPatch, createPatchApproval, createPatchRepository, localForgeFor } = await import("../approvals/test-fixtures");
const { requestWriteBack } = await import("../approvals/request-write-back");
const { executeWriteBack } = await import("../writebacks/execute");
const { forgeResolver } = await import("../writebacks/forges");
const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { startFakeGithub } = await import("@/server/forges/github/testing/fake-github");
const { contentDigest } = await import("@/server/lib/digest");
const { launchFixRun } = await import("./launch");
const { askForReviewAgainAfterPush, requestReviewAgain } = await import("./review-again");

const db = getDb();
let gh: Awaited<ReturnType<typeof startFakeGithub>>;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const reviewJobs = async (intentId: string) =>
  (
    await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'fixloop.review' AND j.payload->>'intentId' = ${intentId}`
  )[0]?.n ?? 0;

describe("ask for review again", () => {
  it("on the local forge: the fix run's pushed patch marks the PR as wanting review again, once per push", async () => {
    const [m1, m2] = [await createUser(), await createUser()];
    const repo = await createPatchRepository([[m1, "maintainer"], [m2, "maintainer"]]);
    const pr = await createPullRequest(db, { repositoryId: repo.repository.id, number: 3, headSha: repo.sha, headRef: "main" });
    await db.pullRequest.update({ where: { id: pr.id }, data: { reviewState: "changes_requested" } });
    const { approvalId, run } = await createPatchApproval({ repo });
    await db.agentDispatchRun.update({ where: { id: run.id }, data: { pullRequestId: pr.id } });
    await callerFor(m1).approvals.reject({ approvalId, reason: "the callers pass strings" });
    const intent = await db.fixSpawnIntent.findFirstOrThrow({ where: { repositoryId: repo.repository.id, kind: "fix" } });
    const launched = await launchFixRun({ db, intentId: intent.id });
    if (launched.kind !== "launched") throw new Error(JSON.stringify(launched));

    // The fix run proposes the patch; a second maintainer approves it; it is pushed.
    const artifact = await db.artifact.create({
      data: { runId: launched.runId, kind: "patch", name: "fix.patch", content: calcPatch, mediaType: "text/x-diff", digest: contentDigest(calcPatch), sizeBytes: Buffer.byteLength(calcPatch) },
    });
    const requested = await requestWriteBack({ db, runId: launched.runId, action: "update_pr_branch", target: { branch: "main", prNumber: 3, headSha: repo.sha }, artifactId: artifact.id, message: "Fix sum()" });
    if (requested.kind !== "approval") throw new Error("expected an approval");
    const shown = await db.approvalRequest.findUniqueOrThrow({ where: { id: requested.approvalId } });
    await callerFor(m2).approvals.approve({ approvalId: requested.approvalId, artifactDigest: shown.artifactDigest, headSha: shown.targetHeadSha });
    expect(await reviewJobs(intent.id)).toBe(0);
    const forgeFor = localForgeFor(repo.dataDir);
    expect((await executeWriteBack({ db, forgeFor, approvalId: requested.approvalId })).outcome).toBe("succeeded");
    expect(await reviewJobs(intent.id)).toBe(1);
    // Executed again (a retried job): already recorded, nothing queued twice.
    expect((await executeWriteBack({ db, forgeFor, approvalId: requested.approvalId })).outcome).toBe("already_recorded");
    expect(await reviewJobs(intent.id)).toBe(1);

    expect(await requestReviewAgain({ db, forgeFor, intentId: intent.id })).toEqual({ kind: "requested", detail: "review requested on #3" });
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).reviewState).toBe("review_requested");
    const log = await db.runEvent.findMany({ where: { runId: launched.runId, type: "log" }, select: { payload: true } });
    expect(log.map((e) => (e.payload as { text: string }).text)).toContain("asked for review again: review requested on #3");

    // The authoring run's own pushes are not a fix run's: they queue nothing.
    await transaction(db, "t", async (tx) => expect(await askForReviewAgainAfterPush(tx, { runId: run.id, writeBackId: "wb_x", kind: "push_commits" })).toBe(false));
  });

  it("on GitHub: the reviewer who requested changes is asked again; an Airlock rejection asks no GitHub reviewer", async () => {
    const repo = await createRepository();
    await db.repository.update({ where: { id: repo.id }, data: { forge: "github" } });
    gh.createRepository(repo.fullName, { branch: "main", files: { "README.md": "x\n" }, pulls: [7] });
    const stack = await createStack(scriptedSpec());
    const pr = await createPullRequest(db, { repositoryId: repo.id, number: 7, headSha: sha("pr-7"), headRef: "agent/fix" });
    const author = await createExecRun({ repositoryId: repo.id, stack, sha: sha("pr-7") });
    await db.agentDispatchRun.update({ where: { id: author.id }, data: { status: "succeeded", pullRequestId: pr.id, headBranch: "agent/fix" } });
    await db.writeBack.create({
      data: { runId: author.id, kind: "update_pr_branch", actor: "t", stackDigest: author.stackDigest, contextDigest: author.contextDigest, promptHash: author.promptHash, target: {}, idempotencyKey: `wb_${author.id}`, outcome: "succeeded" },
    });
    const review = reviewSubmitted({ repo: repo.fullName, number: 7, state: "changes_requested", login: "octo-reviewer", headSha: sha("pr-7") });
    Object.assign((review.payload as { review: Record<string, unknown> }).review, { id: 515_151, body: "Not like this." });
    await deliver(db, review);
    const intent = await db.fixSpawnIntent.findFirstOrThrow({ where: { repositoryId: repo.id, kind: "fix" } });
    const launched = await launchFixRun({ db, intentId: intent.id });
    if (launched.kind !== "launched") throw new Error(JSON.stringify(launched));
    await transaction(db, "t", (tx) => askForReviewAgainAfterPush(tx, { runId: launched.runId, writeBackId: "wb_fix", kind: "update_pr_branch" }));
    expect(await reviewJobs(intent.id)).toBe(1);

    const forgeFor = forgeResolver(db, { dataDir: "/nonexistent", ciTimeoutMs: 1000, githubToken: gh.token, githubApiUrl: gh.url });
    const out = await requestReviewAgain({ db, forgeFor, intentId: intent.id });
    expect(out).toMatchObject({ kind: "requested", detail: expect.stringContaining("review requested from octo-reviewer") });
    // A retried job asks once more; GitHub keeps one request per reviewer.
    await requestReviewAgain({ db, forgeFor, intentId: intent.id });
    expect(gh.repo(repo.fullName).requestedReviewers.get(7)).toEqual(["octo-reviewer"]);
    const calls = gh.requests.filter((r) => r.path === `/repos/${repo.fullName}/pulls/7/requested_reviewers`);
    expect(calls[0]?.body).toEqual({ reviewers: ["octo-reviewer"] });

    // A rejection made in Airlock names an Airlock user, not a GitHub reviewer.
    const airlockIntent = await db.fixSpawnIntent.update({ where: { id: intent.id }, data: { dedupeKey: `fix:approval:${intent.id}` } });
    expect(await requestReviewAgain({ db, forgeFor, intentId: airlockIntent.id })).toMatchObject({ kind: "skipped" });
    expect(gh.repo(repo.fullName).requestedReviewers.get(7)).toEqual(["octo-reviewer"]);
  });
});
