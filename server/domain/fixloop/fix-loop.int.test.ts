// The fix-forward loop against a real database: rejections (a forge review, an Airlock rejection)
// spawn exactly one fix run, none beside a live run (the rejection waits for it to end, then
// spawns once), failed launches burn attempts, the bound escalates once with bounded tries, and
// an escalated branch stays quiet until re-opened.
import { describe, expect, it, vi } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-fix-loop-tests";

const { getDb } = await import("@/server/db");
const { callerFor, createEngagedPullRequest, createUser } = await import("@/server/testing/factories");
const { sha } = await import("../ingest/fixtures/world");
const { reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver, evaluateAll, post } = await import("@/server/domain/evaluation/fixtures/harness");
const { createPatchApproval, createPatchRepository } = await import("../approvals/test-fixtures");
const { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { cancelRun: cancel } = await import("../run-engine/cancel");
const { claimNextAttempt } = await import("../run-engine/claim-attempt");
const { markAttemptRunning } = await import("../runs/attempts");
const { finishAttempt: finish } = await import("../run-engine/finish-attempt");
const { settleRun } = await import("../approvals/settle-run");
const { askForReviewAgainAfterPush } = await import("./review-again");
const { afterRunEnded } = await import("./spawn");
const { getRunFixLoop } = await import("./presenter");
const { launchFixRun } = await import("./launch");
const { escalateFixLoop } = await import("./escalate");
const { reopenForAgents } = await import("./reopen");
const { notify: realNotify } = await import("../notifications/notify");
const { runReactions } = await import("@/server/queue/testing/reactions");

// A deferred rejection is taken up by the run.ended job a run's ending enqueues: ending a run
// here waits for that job, as a worker would run it.
const cancelRun = async (opts: Parameters<typeof cancel>[0]) => {
  const result = await cancel(opts);
  await runReactions();
  return result;
};
const finishAttempt = async (opts: Parameters<typeof finish>[0]) => {
  const result = await finish(opts);
  await runReactions();
  return result;
};

const db = getDb();

const jobCount = async (task: string, intentId: string) =>
  (await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = ${task} AND j.key = ${`fixloop:${intentId}`}`)[0]?.n ?? 0;

let reviewId = 900_000;
function changesRequested(repo: string, number: number, body: string, id = ++reviewId) {
  const delivery = reviewSubmitted({ repo, number, state: "changes_requested", login: "reviewer-person", headSha: sha(`pr-${number}`) });
  const review = (delivery.payload as { review: Record<string, unknown> }).review;
  Object.assign(review, { id, body });
  return delivery;
}

const intents = (repositoryId: string, kind?: "fix" | "escalate") => db.fixSpawnIntent.findMany({ where: { repositoryId, ...(kind ? { kind } : {}) }, orderBy: { createdAt: "asc" } });

describe("fix runs on rejection", () => {
  it("a person's changes-requested review spawns exactly one fix run, even when its evaluation is retried and raced", async () => {
    const { repo, pr, author } = await createEngagedPullRequest();
    const body = "Please keep the `sum` signature;\nthe callers in report.js pass strings. <b>not html</b>";
    const delivery = changesRequested(repo.fullName, 7, body);
    // Three deliveries of one review (GitHub redelivers with new ids), evaluated at once.
    const posted = await Promise.all([post(delivery), post(delivery), post(delivery)]);
    await evaluateAll(db, posted.map((p) => p.deliveryId));

    const made = await intents(repo.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ kind: "fix", branch: "agent/fix-sum", pullRequestId: pr.id, parentRunId: author.id, rejection: body, rejectedBy: "reviewer-person", outcome: "pending" });
    expect(await jobCount("fixloop.launch", made[0]!.id)).toBe(1);

    const launched = await launchFixRun({ db, intentId: made[0]!.id });
    expect(launched.kind).toBe("launched");
    const again = await launchFixRun({ db, intentId: made[0]!.id });
    expect(again.kind).toBe("skipped");
    const fix = await db.agentDispatchRun.findFirstOrThrow({ where: { parentRunId: author.id } });
    expect(fix).toMatchObject({ source: "review", status: "queued", headBranch: "agent/fix-sum", pullRequestId: pr.id, stackDigest: author.stackDigest, headSha: sha("pr-7") });
    // The rejection verbatim, the PR and the task.
    expect(fix.prompt).toContain(body);
    expect(fix.prompt).toContain("#7 PR 7");
    expect(fix.prompt).toContain(author.prompt);
    expect(fix.prompt).toContain("Do not open a new pull request");
    expect(await db.agentDispatchRun.count({ where: { parentRunId: author.id } })).toBe(1);
  });

  it("starts no fix run while a run is live on the branch, and none for an approving review", async () => {
    const { repo, pr, stack } = await createEngagedPullRequest();
    const live = await createExecRun({ repositoryId: repo.id, stack, sha: sha("pr-7") });
    await db.agentDispatchRun.update({ where: { id: live.id }, data: { status: "running", pullRequestId: pr.id, headBranch: "agent/fix-sum" } });
    const result = await deliver(db, changesRequested(repo.fullName, 7, "still wrong"));
    expect(result.detail).toContain(`fix-forward: run #${live.number} is running on agent/fix-sum; the rejection waits until it ends`);
    const approving = reviewSubmitted({ repo: repo.fullName, number: 7, state: "approved", login: "reviewer-person", headSha: sha("pr-7") });
    await deliver(db, approving);
    expect(await intents(repo.id)).toHaveLength(0);
  });

  it("a rejection in Airlock's approval UI spawns exactly one fix run carrying the reason, even when two maintainers reject at once", async () => {
    const [m1, m2] = [await createUser(), await createUser()];
    const repo = await createPatchRepository([[m1, "maintainer"], [m2, "maintainer"]]);
    const { approvalId, run } = await createPatchApproval({ repo });
    const reason = "Drop the +1 in sum() but also add a test for negative numbers.";
    const results = await Promise.allSettled([
      callerFor(m1).approvals.reject({ approvalId, reason }),
      callerFor(m2).approvals.reject({ approvalId, reason }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const made = await intents(repo.repository.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ dedupeKey: `fix:approval:${approvalId}`, parentRunId: run.id, rejection: reason });
    const launched = await launchFixRun({ db, intentId: made[0]!.id });
    if (launched.kind !== "launched") throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const fix = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: launched.runId } });
    expect(fix).toMatchObject({ parentRunId: run.id, headBranch: "main", headSha: run.headSha, stackDigest: run.stackDigest, taskKind: run.taskKind });
    expect(fix.prompt).toContain(reason);
  });
});

describe("the attempt bound and escalation", () => {
  it("a failing launch burns an attempt; at max_fix_attempts the escalation happens exactly once", async () => {
    const [m1] = [await createUser()];
    const repo = await createPatchRepository([[m1, "maintainer"]]);
    await db.repository.update({ where: { id: repo.repository.id }, data: { maxFixAttempts: 2 } });
    const { approvalId, run } = await createPatchApproval({ repo });
    await callerFor(m1).approvals.reject({ approvalId, reason: "wrong approach" });

    const boom = { beforeCreate: () => Promise.reject(new Error("launch pad exploded")) };
    const [first] = await intents(repo.repository.id);
    expect(await launchFixRun({ db, intentId: first!.id, hooks: boom })).toMatchObject({ kind: "failed", error: expect.stringContaining("launch pad exploded"), next: "fix_intended" });
    const [, second] = await intents(repo.repository.id, "fix");
    expect(await launchFixRun({ db, intentId: second!.id, hooks: boom })).toMatchObject({ kind: "failed", next: "escalation_intended" });
    // Two burned attempts, no run created, and the escalation intended instead of a third.
    expect((await intents(repo.repository.id, "fix")).map((i) => i.outcome)).toEqual(["failed", "failed"]);
    expect(await db.agentDispatchRun.count({ where: { parentRunId: run.id } })).toBe(0);
    const [escalation] = await intents(repo.repository.id, "escalate");
    expect(await jobCount("fixloop.escalate", escalation!.id)).toBe(1);

    // The real notifications module: one in-app notification, however often the job runs.
    const notify = vi.fn((tx: Parameters<typeof realNotify>[0], input: Parameters<typeof realNotify>[1]) => realNotify(tx, input, { webhook: null }));
    const done = await escalateFixLoop({ db, intentId: escalation!.id, notify });
    if (done.kind !== "escalated") throw new Error(`not escalated: ${JSON.stringify(done)}`);
    expect(done.digest).toContain("stopped on `main` after 2 of 2 fix runs");
    expect(done.digest).toContain("Rejected by ");
    expect(done.digest).toContain("the fix run could not launch: launch pad exploded");
    expect(notify).toHaveBeenCalledTimes(1);
    expect(notify.mock.calls[0]).toEqual([expect.anything(), expect.objectContaining({ kind: "fix_loop_escalated", repositoryId: repo.repository.id, body: done.digest })]);
    // The digest comment waits at the change gate like any write-back.
    const comment = await db.approvalRequest.findUniqueOrThrow({ where: { id: done.approvalId! } });
    expect(comment).toMatchObject({ runId: run.id, action: "comment", status: "pending", targetBranch: "main" });
    expect((comment.presented as { message?: string }).message).toBe(done.digest);
    expect(await db.fixLoopState.findUniqueOrThrow({ where: { repositoryId_branch: { repositoryId: repo.repository.id, branch: "main" } } })).toMatchObject({ escalatedAt: expect.any(Date), escalationDigest: done.digest });

    // Once: the same job again, and a later rejection, do nothing more.
    expect((await escalateFixLoop({ db, intentId: escalation!.id, notify })).kind).toBe("skipped");
    const later = await createPatchApproval({ repo });
    await callerFor(m1).approvals.reject({ approvalId: later.approvalId, reason: "still wrong" });
    expect(await intents(repo.repository.id)).toHaveLength(3);
    expect(notify).toHaveBeenCalledTimes(1);
    expect(await db.notification.findMany({ where: { repositoryId: repo.repository.id }, select: { kind: true, body: true, runId: true } })).toEqual([
      { kind: "fix_loop_escalated", body: done.digest, runId: run.id },
    ]);
    expect(await db.approvalRequest.count({ where: { runId: run.id, action: "comment" } })).toBe(1);
  });

  it("an escalation that keeps failing is tried at most 3 times, then logs an error", async () => {
    const { repo, author } = await createEngagedPullRequest();
    await db.repository.update({ where: { id: repo.id }, data: { maxFixAttempts: 0 } });
    await deliver(db, changesRequested(repo.fullName, 7, "no"));
    const log = vi.fn();
    const notify = vi.fn(async () => ({ id: "n", created: true }));
    const failing = { beforeCommit: () => Promise.reject(new Error("forge unreachable")) };
    for (let i = 0; i < 3; i++) {
      const pending = (await intents(repo.id, "escalate")).filter((x) => x.outcome === "pending");
      expect(pending).toHaveLength(1);
      const out = await escalateFixLoop({ db, intentId: pending[0]!.id, notify, log, hooks: failing });
      expect(out).toMatchObject({ kind: "failed", error: expect.stringContaining("forge unreachable"), retried: i < 2 });
    }
    expect((await intents(repo.id, "escalate")).map((x) => x.outcome)).toEqual(["failed", "failed", "failed"]);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toMatch(/^error: escalation of agent\/fix-sum .* gave up after 3 tries; last error: .*forge unreachable$/);
    // Rolled back each time: no escalation, no comment, no label flip.
    expect(await db.fixLoopState.count({ where: { repositoryId: repo.id, escalatedAt: { not: null } } })).toBe(0);
    expect(await db.approvalRequest.count({ where: { runId: author.id } })).toBe(0);
    // A further rejection does not start a fourth try.
    await deliver(db, changesRequested(repo.fullName, 7, "no again"));
    expect(await intents(repo.id, "escalate")).toHaveLength(3);
  });

  it("after escalation no fix run starts; re-open for agents (maintainer, audited) resets the bound and asks for the labels back", async () => {
    const maintainer = await createUser();
    const viewer = await createUser();
    const { repo, pr } = await createEngagedPullRequest();
    await db.membership.createMany({ data: [{ userId: maintainer.id, repositoryId: repo.id, role: "maintainer" }, { userId: viewer.id, repositoryId: repo.id, role: "viewer" }] });
    await db.pullRequest.update({ where: { id: pr.id }, data: { labels: ["ready-for-agent", "bug"] } });
    await db.repository.update({ where: { id: repo.id }, data: { maxFixAttempts: 0 } });
    await deliver(db, changesRequested(repo.fullName, 7, "round one"));
    const [escalation] = await intents(repo.id, "escalate");
    expect((await escalateFixLoop({ db, intentId: escalation!.id, notify: async () => ({ id: "n", created: true }) })).kind).toBe("escalated");
    // The flip waits at the gate: Airlock's copy shows the forge's labels until it executes.
    expect((await db.pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).labels).toEqual(["ready-for-agent", "bug"]);
    const flip = await db.approvalRequest.findFirstOrThrow({ where: { action: "set_labels", run: { repositoryId: repo.id } } });
    expect(flip).toMatchObject({ status: "pending", targetPrNumber: 7, presented: expect.objectContaining({ labels: { add: ["ready-for-human"], remove: ["ready-for-agent"] } }) });

    const quiet = await deliver(db, changesRequested(repo.fullName, 7, "round two"));
    expect(quiet.detail).toContain("was escalated to a person");
    expect(await intents(repo.id)).toHaveLength(1);

    await expect(callerFor(viewer).fixLoops.reopen({ repositoryId: repo.id, branch: "agent/fix-sum" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await db.repository.update({ where: { id: repo.id }, data: { maxFixAttempts: 1 } });
    await callerFor(maintainer).fixLoops.reopen({ repositoryId: repo.id, branch: "agent/fix-sum" });
    await expect(callerFor(maintainer).fixLoops.reopen({ repositoryId: repo.id, branch: "agent/fix-sum" })).rejects.toMatchObject({ code: "CONFLICT" });
    // The pending flip is withdrawn; the flip back is the maintainer's own write-back.
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: flip.id } })).toMatchObject({ status: "expired" });
    expect(await db.writeBack.findFirstOrThrow({ where: { kind: "set_labels", run: { repositoryId: repo.id } } })).toMatchObject({
      approvedBy: maintainer.email,
      outcome: "pending",
      target: expect.objectContaining({ prNumber: 7, labels: { add: ["ready-for-agent"], remove: ["ready-for-human"] } }),
    });
    expect(await db.auditEntry.count({ where: { repositoryId: repo.id, action: "fixloop.reopen", actorUserId: maintainer.id } })).toBe(1);

    await deliver(db, changesRequested(repo.fullName, 7, "round three"));
    expect((await intents(repo.id, "fix")).map((i) => i.rejection)).toEqual(["round three"]);
    // The reset counts only new intents: a direct call proves the domain function is the gate.
    await expect(reopenForAgents({ db, actor: { userId: maintainer.id, label: maintainer.email }, repositoryId: repo.id, branch: "agent/fix-sum" })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});

const maintainerActor = { userId: null, label: "a maintainer" };
const loopState = (repositoryId: string, branch = "agent/fix-sum") => db.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId, branch } } });

/** A run of ours that is live on the engaged PR's branch (e.g. a CI repair still running). */
async function liveRunOn(opts: { repositoryId: string; pullRequestId: string; stack: Awaited<ReturnType<typeof createStack>>; status?: "queued" | "running" | "awaiting_approval"; branch?: string }) {
  const run = await createExecRun({ repositoryId: opts.repositoryId, stack: opts.stack, sha: sha("pr-7") });
  return db.agentDispatchRun.update({ where: { id: run.id }, data: { status: opts.status ?? "running", pullRequestId: opts.pullRequestId, headBranch: opts.branch ?? "agent/fix-sum" } });
}

describe("a rejection that arrives while a run is live", () => {
  it("is kept, the latest one only, and starts exactly one fix run carrying it verbatim when the run ends", async () => {
    const { repo, pr, author, stack } = await createEngagedPullRequest();
    const live = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
    await deliver(db, changesRequested(repo.fullName, 7, "first round: rename it"));
    const latest = "Second look: `sum` must reject strings.\n\n<script>alert(1)</script> & keep the signature.";
    const result = await deliver(db, changesRequested(repo.fullName, 7, latest));
    expect(result.detail).toContain(`run #${live.number} is running on agent/fix-sum; the rejection waits until it ends`);
    expect(await intents(repo.id)).toHaveLength(0);
    expect(await loopState(repo.id)).toMatchObject({ deferredText: latest, deferredBy: "reviewer-person", deferredPullRequestId: pr.id, deferredBehindRunId: live.id, deferredRejectedRunId: null });

    // The run page says what the loop waits for.
    const view = await getRunFixLoop({ db, runId: live.id });
    expect(view?.deferred).toMatchObject({ by: "reviewer-person", text: latest, behind: { id: live.id, number: live.number, status: "running" } });

    await cancelRun({ db, actor: maintainerActor, runId: live.id });
    const made = await intents(repo.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ kind: "fix", parentRunId: author.id, pullRequestId: pr.id, rejection: latest, rejectedBy: "reviewer-person", outcome: "pending" });
    expect(made[0]!.dedupeKey).toMatch(/^fix:review:/);
    expect(await jobCount("fixloop.launch", made[0]!.id)).toBe(1);
    expect((await loopState(repo.id))?.deferredKey).toBeNull();
    expect((await getRunFixLoop({ db, runId: live.id }))?.deferred).toBeNull();

    // Taken up once: the hook again (a retried job) finds nothing stored.
    expect(await db.$transaction((tx) => afterRunEnded(tx, live.id, new Date()))).toEqual([]);
    const launched = await launchFixRun({ db, intentId: made[0]!.id });
    if (launched.kind !== "launched") throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const fix = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: launched.runId } });
    expect(fix.prompt).toContain(`## The rejection, verbatim (by reviewer-person)\n${latest}`);
    expect(fix.prompt).not.toContain("first round");
    expect(await intents(repo.id)).toHaveLength(1);
  });

  it("two runs on the branch ending at once start one fix run, and only after the last one ends", async () => {
    for (let round = 0; round < 3; round++) {
      const { repo, pr, stack } = await createEngagedPullRequest();
      const a = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
      const b = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack, status: "queued" });
      const c = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack, status: "awaiting_approval" });
      await deliver(db, changesRequested(repo.fullName, 7, `round ${round}: wrong`));
      // One of three ends: two are still live, so it waits (behind one of them).
      await cancelRun({ db, actor: maintainerActor, runId: c.id });
      expect(await intents(repo.id)).toHaveLength(0);
      expect([a.id, b.id]).toContain((await loopState(repo.id))?.deferredBehindRunId);
      await Promise.all([cancelRun({ db, actor: maintainerActor, runId: a.id }), cancelRun({ db, actor: maintainerActor, runId: b.id })]);
      const made = await intents(repo.id);
      expect(made.map((i) => [i.kind, i.rejection])).toEqual([["fix", `round ${round}: wrong`]]);
      expect(await jobCount("fixloop.launch", made[0]!.id)).toBe(1);
      expect((await loopState(repo.id))?.deferredKey).toBeNull();
    }
  });

  it("an agent run that fails, or times out past its retries, ends the wait; a retried attempt does not", async () => {
    const user = await createUser();
    const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "maintainer"]] });
    const pool = await createPool({ concurrency: 10 });
    await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
    const { pr } = await createEngagedPullRequest({ repository: local.repository });
    const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries: 1 } }));
    const queued = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
    await db.agentDispatchRun.update({ where: { id: queued.id }, data: { pullRequestId: pr.id, headBranch: "agent/fix-sum" } });
    const attempt = async () => {
      const claim = await claimNextAttempt({ db, runId: queued.id, workerRef: "test/deferral", kubernetesAvailable: false });
      if (claim.kind !== "started") throw new Error(`claim ${claim.kind}: ${claim.reason}`);
      await markAttemptRunning({ db, fence: claim.fence, sessionId: `s-${claim.attempt.number}` });
      return (status: "timed_out" | "failed") => finishAttempt({ db, fence: claim.fence, run: claim.run, end: { status, reason: "stopped" }, artifacts: [], approvalTtlMs: 60_000 });
    };
    const endFirst = await attempt();
    await deliver(db, changesRequested(local.repository.fullName, 7, "the README is wrong"));
    expect((await loopState(local.repository.id))?.deferredText).toBe("the README is wrong");
    expect((await endFirst("timed_out")).runStatus).toBe("queued");
    expect(await intents(local.repository.id)).toHaveLength(0);
    await db.$executeRaw`DELETE FROM graphile_worker._private_jobs WHERE "key" = ${`run.dispatch:${queued.id}`}`;
    const endSecond = await attempt();
    expect((await endSecond("timed_out")).runStatus).toBe("failed");
    expect((await intents(local.repository.id)).map((i) => i.rejection)).toEqual(["the README is wrong"]);
  });

  it("is dropped when a later review approves, or its own review is dismissed, before the run ends", async () => {
    const { repo, pr, stack } = await createEngagedPullRequest();
    const live = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
    await deliver(db, changesRequested(repo.fullName, 7, "no"));
    // A comment is no verdict: the rejection still stands.
    await deliver(db, reviewSubmitted({ repo: repo.fullName, number: 7, state: "commented", login: "someone", headSha: sha("pr-7") }));
    expect((await loopState(repo.id))?.deferredText).toBe("no");
    const approved = await deliver(db, reviewSubmitted({ repo: repo.fullName, number: 7, state: "approved", login: "reviewer-person", headSha: sha("pr-7") }));
    expect(approved.detail).toContain("the rejection deferred on agent/fix-sum no longer stands (reviewer-person's review: approved)");
    await cancelRun({ db, actor: maintainerActor, runId: live.id });
    expect(await intents(repo.id)).toHaveLength(0);

    // Dismissal: only the dismissed review's own rejection goes.
    const other = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
    await deliver(db, changesRequested(repo.fullName, 7, "still no", 123_456));
    const dismissOther = changesRequested(repo.fullName, 7, "", 123_455);
    (dismissOther.payload as { review: Record<string, unknown> }).review.state = "dismissed";
    await deliver(db, dismissOther);
    expect((await loopState(repo.id))?.deferredText).toBe("still no");
    const dismiss = changesRequested(repo.fullName, 7, "", 123_456);
    (dismiss.payload as { review: Record<string, unknown> }).review.state = "dismissed";
    await deliver(db, dismiss);
    expect((await loopState(repo.id))?.deferredKey).toBeNull();
    await cancelRun({ db, actor: maintainerActor, runId: other.id });
    expect(await intents(repo.id)).toHaveLength(0);
  });

  it("is dropped when the live run is a fix run whose patch was pushed and asked for review again", async () => {
    const { repo } = await createEngagedPullRequest();
    await deliver(db, changesRequested(repo.fullName, 7, "round one"));
    const [first] = await intents(repo.id);
    const launched = await launchFixRun({ db, intentId: first!.id });
    if (launched.kind !== "launched") throw new Error(`not launched: ${JSON.stringify(launched)}`);
    // The fix run is live (queued): the reviewer's second verdict on the old head waits.
    await deliver(db, changesRequested(repo.fullName, 7, "round one, more"));
    expect((await loopState(repo.id))?.deferredBehindRunId).toBe(launched.runId);
    // Its patch is pushed; the write-back's record transaction asks for review again, then settles
    // the run (as writebacks/execute.ts does): the next validation round supersedes the rejection.
    await db.agentDispatchRun.update({ where: { id: launched.runId }, data: { status: "awaiting_approval" } });
    const fix = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: launched.runId } });
    const wb = await db.writeBack.create({
      data: { runId: fix.id, kind: "update_pr_branch", actor: "tester", stackDigest: fix.stackDigest, contextDigest: fix.contextDigest, promptHash: fix.promptHash, target: { repository: repo.fullName, branch: "agent/fix-sum", prNumber: 7 }, idempotencyKey: `wb_${fix.id}`, outcome: "succeeded" },
    });
    const settled = await db.$transaction(async (tx) => {
      expect(await askForReviewAgainAfterPush(tx, { runId: fix.id, writeBackId: wb.id, kind: wb.kind })).toBe(true);
      return settleRun(tx, fix.id, new Date());
    });
    expect(settled).toBe("succeeded");
    await runReactions();
    expect((await loopState(repo.id))?.deferredKey).toBeNull();
    expect(await intents(repo.id)).toHaveLength(1);
    // A rejection of the new round (after the re-request) is a new round: it stands.
    await deliver(db, changesRequested(repo.fullName, 7, "round two"));
    expect((await intents(repo.id, "fix")).map((i) => i.rejection)).toEqual(["round one", "round two"]);
  });

  it("on an escalated branch starts nothing; at the bound it intends the escalation instead", async () => {
    const escalated = await createEngagedPullRequest();
    const live = await liveRunOn({ repositoryId: escalated.repo.id, pullRequestId: escalated.pr.id, stack: escalated.stack });
    await deliver(db, changesRequested(escalated.repo.fullName, 7, "no"));
    // Escalated meanwhile (as escalateFixLoop marks it): a person owns the branch now.
    await db.fixLoopState.update({ where: { repositoryId_branch: { repositoryId: escalated.repo.id, branch: "agent/fix-sum" } }, data: { escalatedAt: new Date() } });
    expect((await getRunFixLoop({ db, runId: live.id }))?.deferred).toBeNull();
    await cancelRun({ db, actor: maintainerActor, runId: live.id });
    expect(await intents(escalated.repo.id)).toHaveLength(0);
    expect((await loopState(escalated.repo.id))?.deferredKey).toBeNull();

    const bound = await createEngagedPullRequest();
    await db.repository.update({ where: { id: bound.repo.id }, data: { maxFixAttempts: 0 } });
    const running = await liveRunOn({ repositoryId: bound.repo.id, pullRequestId: bound.pr.id, stack: bound.stack });
    await deliver(db, changesRequested(bound.repo.fullName, 7, "wrong again"));
    expect(await intents(bound.repo.id)).toHaveLength(0);
    await cancelRun({ db, actor: maintainerActor, runId: running.id });
    const made = await intents(bound.repo.id);
    expect(made.map((i) => [i.kind, i.rejection])).toEqual([["escalate", "wrong again"]]);
    expect(await jobCount("fixloop.escalate", made[0]!.id)).toBe(1);
  });

  it("a rejection in Airlock's approval UI waits for another live run on the branch, then fixes the rejected run's work", async () => {
    const m1 = await createUser();
    const repo = await createPatchRepository([[m1, "maintainer"]]);
    const { approvalId, run } = await createPatchApproval({ repo });
    const stack = await createStack(scriptedSpec());
    const other = await createExecRun({ repositoryId: repo.repository.id, stack, sha: run.headSha });
    await callerFor(m1).approvals.reject({ approvalId, reason: "Not like this: add a test." });
    expect(await intents(repo.repository.id)).toHaveLength(0);
    expect(await loopState(repo.repository.id, "main")).toMatchObject({ deferredKey: `approval:${approvalId}`, deferredRejectedRunId: run.id, deferredBehindRunId: other.id });
    await cancelRun({ db, actor: maintainerActor, runId: other.id });
    const made = await intents(repo.repository.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ dedupeKey: `fix:approval:${approvalId}`, parentRunId: run.id, rejection: "Not like this: add a test." });
  });

  it("a failed launch's retry of an older rejection does not displace a later one waiting", async () => {
    const { repo, pr, stack } = await createEngagedPullRequest();
    await deliver(db, changesRequested(repo.fullName, 7, "older"));
    const [older] = await intents(repo.id);
    const live = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
    await deliver(db, changesRequested(repo.fullName, 7, "newer"));
    const boom = { beforeCreate: () => Promise.reject(new Error("launch pad exploded")) };
    expect(await launchFixRun({ db, intentId: older!.id, hooks: boom })).toMatchObject({ kind: "failed", next: "deferred" });
    expect((await loopState(repo.id))?.deferredText).toBe("newer");
    await cancelRun({ db, actor: maintainerActor, runId: live.id });
    expect((await intents(repo.id, "fix")).map((i) => [i.rejection, i.outcome])).toEqual([["older", "failed"], ["newer", "pending"]]);
  });

  it("is dropped when the PR was merged or closed before the run ended", async () => {
    const { repo, pr, stack } = await createEngagedPullRequest();
    const live = await liveRunOn({ repositoryId: repo.id, pullRequestId: pr.id, stack });
    await deliver(db, changesRequested(repo.fullName, 7, "no"));
    await db.pullRequest.update({ where: { id: pr.id }, data: { state: "merged" } });
    const outcomes = await db.$transaction(async (tx) => {
      await tx.agentDispatchRun.update({ where: { id: live.id }, data: { status: "failed" } });
      return afterRunEnded(tx, live.id, new Date());
    });
    expect(outcomes).toEqual([{ kind: "skipped", reason: "PR #7 is merged: reviewer-person's rejection no longer asks for a fix" }]);
    expect(await intents(repo.id)).toHaveLength(0);
  });
});
