import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { calcBefore, createPatchApproval, createPatchRepository, localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { zPresented } from "@/server/domain/approvals/schemas";
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { createRule } from "@/server/domain/ingest/fixtures/world";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { runLocalCheck } from "@/server/forges/local/local-ci";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { executeWriteBack } from "./execute";
import { forgeResolver } from "./forges";
import { settleRerun } from "./rerun";

// The rerun write-back end to end. On the local forge: after an approved fix is pushed, a
// maintainer asks for the check to be rerun, a person approves exactly what the screen says (the
// whole check, the local CI cannot rerun a step), the local CI runs once even across a crash, its
// Pipeline is linked to the run, and the check_rerun it emits fires the rerun-after-fix rule once,
// a repeat dropped by the spec's dedupe key; a fork's rerun stays untrusted. On GitHub (the fake
// GitHub over HTTP): the failed job alone is rerun once across a crash, its new attempt is a
// linked Pipeline, and its result, read from GitHub once the attempt completes, emits check_rerun once.

const db = () => getDb();
let gh: FakeGithub;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const asPerson = (u: { id: string; email: string }) => ({ id: u.id, email: u.email, isAdmin: false });
const killed = () => {
  throw new Error("worker killed");
};
/** The check passes once the fix (calc.js without the off-by-one) is on the branch. */
const checkCommand = `grep -q "return a + b;" calc.js`;

/** A local repository whose check failed, a repair run about that check, and its approved fix pushed. */
async function fixedRun(opts: { origin?: "repository" | "fork"; exceptions?: boolean } = {}) {
  const m = await createUser();
  const approver = await createUser();
  const v = await createUser();
  const repo = await createPatchRepository([[m, "maintainer"], [approver, "maintainer"], [v, "viewer"]]);
  await db().repository.update({ where: { id: repo.repository.id }, data: { checkCommand, ...(opts.exceptions ? { writeBackExceptions: ["rerun_workflow"] } : {}) } });
  const failed = await runLocalCheck({ db: db(), dataDir: repo.dataDir, repositoryId: repo.repository.id, branch: "main", timeoutMs: 30_000 });
  expect(failed.conclusion).toBe("failure");
  if (opts.exceptions) repo.stack = await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
  const { approvalId, run, artifact } = await createPatchApproval({ repo });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { pipelineId: failed.pipelineId, jobId: failed.jobId, origin: opts.origin ?? "repository", isFork: opts.origin === "fork" } });
  const a = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
  await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
  expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })).toMatchObject({ outcome: "succeeded" });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "succeeded" } });
  const rule = await createRule(db(), { kind: "check_rerun", name: "rerun-after-approved-fix", repositoryId: repo.repository.id, stackId: repo.stack.id, taskKind: "diagnose", action: "auto_run" });
  return { m, approver, v, repo, run, fix: artifact, failed, rule };
}

const linkedReruns = (runId: string) => db().pipeline.findMany({ where: { triggeredByRunId: runId, event: "rerun" } });

describe("the rerun write-back", () => {
  it("a rerun after an approved fix creates a linked Pipeline and fires check_rerun once", async () => {
    const { m, approver, v, repo, run, fix, failed, rule } = await fixedRun();
    const detail = await callerFor(m).runs.byId({ runId: run.id });
    expect(detail.rerun).toMatchObject({ allowed: true, reason: null, step: { supported: false, why: expect.stringContaining("whole check") } });
    expect((await callerFor(v).runs.byId({ runId: run.id })).rerun).toMatchObject({ allowed: false, reason: expect.stringContaining("maintainer role") });
    await expect(callerFor(v).writeBacks.requestRerun({ runId: run.id, scope: "failed_jobs" })).rejects.toMatchObject({ code: "FORBIDDEN" });

    const asked = await callerFor(m).writeBacks.requestRerun({ runId: run.id, scope: "failed_jobs" });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    await expect(callerFor(m).writeBacks.requestRerun({ runId: run.id, scope: "failed_jobs" })).rejects.toMatchObject({ code: "CONFLICT" });
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } });
    const presented = zPresented.parse(approval.presented);
    expect(presented.rerun).toMatchObject({ scope: "whole_check", pipelineId: failed.pipelineId, checkName: "local-ci / test", approvedArtifactDigest: fix.digest, requestedBy: m.email });
    expect(presented.message).toBe(presented.rerun?.summary);
    expect(presented.message).toContain("It cannot rerun a single step.");
    expect(approval).toMatchObject({ action: "rerun_workflow", targetCheck: "local-ci / test", targetBranch: "main" });

    await expect(callerFor(v).approvals.approve({ approvalId: asked.approvalId, artifactDigest: null, headSha: null })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: null, headSha: null });
    // A replayed approval writes nothing more.
    await expect(approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: null, headSha: null })).rejects.toMatchObject({ code: expect.stringMatching(/CONFLICT|PRECONDITION_FAILED/) });
    expect(await db().writeBack.count({ where: { runId: run.id, kind: "rerun_workflow" } })).toBe(1);

    const forgeFor = localForgeFor(repo.dataDir);
    await expect(executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId, afterForgeCall: killed })).rejects.toThrow("worker killed");
    expect(await linkedReruns(run.id)).toHaveLength(1);
    const done = await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId });
    expect(done).toMatchObject({ outcome: "succeeded", reconciled: true });
    expect(await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId })).toMatchObject({ outcome: "already_recorded" });
    const [rerun] = await linkedReruns(run.id);
    expect(await linkedReruns(run.id)).toHaveLength(1);
    expect(rerun).toMatchObject({ status: "completed", conclusion: "success", externalId: done.externalRef, checkName: "local-ci / test" });
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(wb).toMatchObject({ kind: "rerun_workflow", outcome: "succeeded", approvedBy: approver.email, stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, externalRef: rerun?.externalId });
    expect((await callerFor(m).runs.byId({ runId: run.id })).rerunPipelines.map((p) => p.id)).toContain(rerun?.id);

    // The result is in: one check_rerun, with the spec's key, fires the rule once.
    const deliveries = await db().webhookDelivery.findMany({ where: { deliveryId: { startsWith: "check-rerun-" }, payload: { path: ["ciEvent", "originalRunId"], equals: run.id } } });
    expect(deliveries).toHaveLength(1);
    const event = (deliveries[0]?.payload as { ciEvent: CiEvent }).ciEvent;
    expect(event).toMatchObject({ type: "check_rerun", originalRunId: run.id, approvalId: asked.approvalId, approvedArtifactDigest: fix.digest, target: { checkName: "local-ci / test" }, headSha: rerun?.headSha, actor: { login: approver.email, type: "user", airlockRole: "maintainer" } });
    const first = await evaluateDelivery({ db: db(), deliveryId: deliveries[0]!.deliveryId });
    expect(first.created).toHaveLength(1);
    const fired = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: first.created[0]!.runId } });
    expect(fired).toMatchObject({ source: "check_rerun", triggerRuleId: rule.id, taskKind: "diagnose", origin: "repository", isFork: false });
    expect(fired.dedupeKey).toContain(`check-rerun:${run.id}:`);
    // The same rerun reported again (a raced or retried emitter): dropped by its dedupe key.
    const again = await ingestCiEvent({ db: db(), event, deliveryId: `check-rerun-replay-${wb.id}` });
    const second = await evaluateDelivery({ db: db(), deliveryId: again.deliveryId });
    expect(second.created).toHaveLength(0);
    expect(second.duplicates.map((d) => d.runId)).toEqual([fired.id]);
    expect(await db().agentDispatchRun.count({ where: { triggerRuleId: rule.id } })).toBe(1);
  });

  it("an approved rerun whose repository lost its check command fails once with the reason, and a retried job changes nothing", async () => {
    const { m, approver, repo, run } = await fixedRun();
    const asked = await callerFor(m).writeBacks.requestRerun({ runId: run.id, scope: "failed_jobs" });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: null, headSha: null });
    // Removed after the approval, before the worker executes it.
    await db().repository.update({ where: { id: repo.repository.id }, data: { checkCommand: null } });
    const forgeFor = localForgeFor(repo.dataDir);
    expect(await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId })).toMatchObject({ outcome: "failed" });
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(wb).toMatchObject({ outcome: "failed", error: expect.stringContaining("has no check command configured") });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } })).toMatchObject({ status: "failed" });
    expect(await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId })).toMatchObject({ outcome: "already_recorded" });
    expect(await linkedReruns(run.id)).toHaveLength(0);
    expect(await db().notification.count({ where: { runId: run.id, kind: "write_back_failed" } })).toBe(1);
  });

  it("a fork's rerun waits for a person whatever the repository exempts, and its check_rerun run stays untrusted", async () => {
    const { m, approver, repo, run } = await fixedRun({ origin: "fork", exceptions: true });
    const asked = await callerFor(m).writeBacks.requestRerun({ runId: run.id, scope: "failed_jobs" });
    expect(asked.kind).toBe("approval");
    if (asked.kind !== "approval") return;
    const decision = await db().policyDecision.findFirstOrThrow({ where: { runId: run.id, subject: { contains: "rerun_workflow" } }, orderBy: { createdAt: "desc" } });
    expect(decision).toMatchObject({ ruleName: "untrusted_origin_needs_approval", value: true });
    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: null, headSha: null });
    await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId: asked.approvalId });
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    const evaluated = await evaluateDelivery({ db: db(), deliveryId: `check-rerun-${wb.id}` });
    expect(evaluated.created).toHaveLength(1);
    const fired = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: evaluated.created[0]!.runId } });
    expect(fired).toMatchObject({ origin: "fork", isFork: true });
    expect(fired.originReason).toContain(`run #${run.number}`);
  });

  it("on GitHub: only the failed job is rerun, once across a crash (the attempt is pinned first); its new attempt is a linked Pipeline whose result emits check_rerun once", async () => {
    const m = await createUser();
    const approver = await createUser();
    const repository = await createRepository({ members: [[m, "maintainer"], [approver, "maintainer"]] });
    await db().repository.update({ where: { id: repository.id }, data: { forge: "github" } });
    const { headSha } = gh.createRepository(repository.fullName, { branch: "fix-sum", files: { "calc.js": calcBefore }, pulls: [9] });
    gh.addWorkflowRun(repository.fullName, { id: 4242, status: "completed", conclusion: "failure", headSha, headBranch: "fix-sum", jobs: [{ id: 777, name: "test", conclusion: "failure" }, { id: 778, name: "lint", conclusion: "failure" }] });
    const pipeline = await db().pipeline.create({ data: { repositoryId: repository.id, workflowName: "CI", checkName: "CI / test", externalId: "4242", status: "completed", conclusion: "failure", headSha, headBranch: "fix-sum", url: `https://github.example.test/${repository.fullName}/actions/runs/4242` } });
    const job = await db().job.create({ data: { pipelineId: pipeline.id, externalId: "777", name: "test", step: "npm test", status: "completed", conclusion: "failure" } });
    const stack = await createStack(scriptedSpec());
    const created = await createExecRun({ repositoryId: repository.id, stack, sha: headSha, taskKind: "diagnose" });
    const run = await db().agentDispatchRun.update({ where: { id: created.id }, data: { status: "succeeded", pipelineId: pipeline.id, jobId: job.id, origin: "repository" } });

    expect((await callerFor(m).runs.byId({ runId: run.id })).rerun.step).toMatchObject({ supported: true });
    const asked = await callerFor(m).writeBacks.requestRerun({ runId: run.id, scope: "failed_job" });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    const presented = zPresented.parse((await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } })).presented);
    expect(presented.rerun).toMatchObject({ scope: "failed_job", jobExternalId: "777", externalRunId: "4242", approvedArtifactDigest: null });
    expect(presented.message).toBe("GitHub reruns the failed job test (job 777) of workflow run 4242.");
    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: null, headSha: null });

    const forgeFor = forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });
    await expect(executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId, afterForgeCall: killed })).rejects.toThrow("worker killed");
    expect(gh.repo(repository.fullName).workflowRuns.get(4242)).toMatchObject({ runAttempt: 2, status: "queued" });
    // The rerun even finished before the retry: the pinned attempt still tells it was done.
    Object.assign(gh.repo(repository.fullName).workflowRuns.get(4242) ?? {}, { status: "completed", conclusion: "success" });
    const done = await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId });
    expect(done).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: "4242#2" });
    const reruns = gh.requests.filter((r) => r.method === "POST" && r.path.includes("/actions/"));
    expect(reruns.map((r) => r.path)).toEqual([`/repos/${repository.fullName}/actions/jobs/777/rerun`]);
    const linked = await linkedReruns(run.id);
    expect(linked).toHaveLength(1);
    expect(linked[0]).toMatchObject({ externalId: "4242#2", checkName: "CI / test", status: "queued", headSha, url: pipeline.url });
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(wb).toMatchObject({ outcome: "succeeded", externalRef: "4242#2", target: expect.objectContaining({ rerun: expect.objectContaining({ runAttempt: 1 }) }) });

    // Its result is read from GitHub (rerun.settle, queued with the record) until the attempt completes.
    const settleJobs = await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`rerun-settle:${wb.id}`}`;
    expect(settleJobs[0]?.n).toBe(1);
    const rule = await createRule(db(), { kind: "check_rerun", repositoryId: repository.id, stackId: stack.id, taskKind: "diagnose", action: "auto_run" });
    Object.assign(gh.repo(repository.fullName).workflowRuns.get(4242) ?? {}, { status: "in_progress", conclusion: null });
    expect(await settleRerun({ db: db(), forgeFor, writeBackId: wb.id })).toBe("waiting");
    expect(await db().pipeline.findUniqueOrThrow({ where: { id: linked[0]!.id } })).toMatchObject({ status: "in_progress", conclusion: null });
    expect(await db().webhookDelivery.count({ where: { deliveryId: `check-rerun-${wb.id}` } })).toBe(0);
    Object.assign(gh.repo(repository.fullName).workflowRuns.get(4242) ?? {}, { status: "completed", conclusion: "success" });
    const settled = await Promise.all([0, 1].map(() => settleRerun({ db: db(), forgeFor, writeBackId: wb.id })));
    expect(settled).toEqual(["settled", "settled"]);
    expect(await db().pipeline.findUniqueOrThrow({ where: { id: linked[0]!.id } })).toMatchObject({ status: "completed", conclusion: "success" });
    const delivery = await db().webhookDelivery.findUniqueOrThrow({ where: { deliveryId: `check-rerun-${wb.id}` } });
    expect((delivery.payload as { ciEvent: CiEvent }).ciEvent).toMatchObject({ type: "check_rerun", originalRunId: run.id, approvedArtifactDigest: null, target: { checkName: "CI / test", jobName: "test" }, headSha });
    const evaluated = await evaluateDelivery({ db: db(), deliveryId: delivery.deliveryId });
    expect(evaluated.created).toHaveLength(1);
    expect(await db().agentDispatchRun.count({ where: { triggerRuleId: rule.id } })).toBe(1);
  });
});
