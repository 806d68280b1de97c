// The fix-forward loop against a real database: rejections (a forge review, an Airlock rejection)
// spawn exactly one fix run, none beside a live run, failed launches burn attempts, the bound
// escalates once with bounded tries, and an escalated branch stays quiet until re-opened.
import { describe, expect, it, vi } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-fix-loop-tests";

const { getDb } = await import("@/server/db");
const { callerFor, createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, sha } = await import("../ingest/fixtures/world");
const { reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver, evaluateAll, post } = await import("../ingest/fixtures/harness");
const { createPatchApproval, createPatchRepository } = await import("../approvals/test-fixtures");
const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { launchFixRun } = await import("./launch");
const { escalateFixLoop } = await import("./escalate");
const { reopenForAgents } = await import("./reopen");
const { notify: realNotify } = await import("../notifications/notify");

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

/** A PR whose branch an agent run of ours pushed to (an executed write-back). */
async function engagedPullRequest() {
  const repo = await createRepository();
  const stack = await createStack(scriptedSpec());
  const pr = await createPullRequest(db, { repositoryId: repo.id, number: 7, headSha: sha("pr-7"), headRef: "agent/fix-sum" });
  const author = await createExecRun({ repositoryId: repo.id, stack, sha: sha("pr-7") });
  await db.agentDispatchRun.update({ where: { id: author.id }, data: { status: "succeeded", pullRequestId: pr.id, headBranch: "agent/fix-sum" } });
  await db.writeBack.create({
    data: {
      runId: author.id,
      kind: "update_pr_branch",
      actor: "tester",
      stackDigest: author.stackDigest,
      contextDigest: author.contextDigest,
      promptHash: author.promptHash,
      target: { repository: repo.fullName, branch: "agent/fix-sum", prNumber: 7 },
      idempotencyKey: `wb_${author.id}`,
      outcome: "succeeded",
    },
  });
  return { repo, pr, author, stack };
}

const intents = (repositoryId: string, kind?: "fix" | "escalate") => db.fixSpawnIntent.findMany({ where: { repositoryId, ...(kind ? { kind } : {}) }, orderBy: { createdAt: "asc" } });

describe("fix runs on rejection", () => {
  it("a person's changes-requested review spawns exactly one fix run, even when its evaluation is retried and raced", async () => {
    const { repo, pr, author } = await engagedPullRequest();
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
    const { repo, pr, stack } = await engagedPullRequest();
    const live = await createExecRun({ repositoryId: repo.id, stack, sha: sha("pr-7") });
    await db.agentDispatchRun.update({ where: { id: live.id }, data: { status: "running", pullRequestId: pr.id, headBranch: "agent/fix-sum" } });
    const result = await deliver(db, changesRequested(repo.fullName, 7, "still wrong"));
    expect(result.detail).toContain(`fix-forward: run #${live.number} is running on agent/fix-sum`);
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
    const { repo, author } = await engagedPullRequest();
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
    const { repo, pr } = await engagedPullRequest();
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
