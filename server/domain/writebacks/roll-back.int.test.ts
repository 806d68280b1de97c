import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, transaction } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { zPresented } from "@/server/domain/approvals/schemas";
import { localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { linkTriageToRun } from "@/server/domain/triage/triage";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { git } from "@/server/forges/local/git";
import { commitFiles, resolveRevision } from "@/server/forges/local/repositories";
import { createExecRun, createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { executeWriteBack } from "./execute";
import { forgeResolver } from "./forges";
import { requestRollBack } from "./roll-back";

// roll_back end to end: CI triage decided a failed deploy rolls back; the triage.rollBack job makes
// it an approval item on the failure's run; a person approves; the executor reverts the failing
// deploy's change (a revert commit pushed like push_commits) or reruns the last good deploy, as
// the repository chose, once.

const db = () => getDb();
const approver = (u: { id: string; email: string }) => ({ id: u.id, email: u.email, isAdmin: false });
let n = 0;

async function pipeline(repositoryId: string, sha: string, conclusion: "success" | "failure", at: Date, externalId?: string) {
  return db().pipeline.create({
    data: { repositoryId, workflowName: "Deploy", checkName: "Deploy / production", externalId: externalId ?? `deploy-${++n}-${Date.now()}`, status: "completed", conclusion, headSha: sha, headBranch: "main", createdAt: at, completedAt: at },
  });
}

/** A failed deploy of `sha`, triaged roll_back, with the run the failure dispatched. */
async function triagedFailure(opts: { repositoryId: string; failingSha: string; goodSha?: string; goodExternalId?: string }) {
  if (opts.goodSha) await pipeline(opts.repositoryId, opts.goodSha, "success", new Date(Date.now() - 3_600_000), opts.goodExternalId);
  const failing = await pipeline(opts.repositoryId, opts.failingSha, "failure", new Date());
  const run = await createExecRun({ repositoryId: opts.repositoryId, stack: await createStack(scriptedSpec()), sha: opts.failingSha, taskKind: "diagnose" });
  const triage = await db().triageDecision.create({
    data: { key: `triage:${failing.id}#1`, repositoryId: opts.repositoryId, pipelineId: failing.id, headSha: opts.failingSha, disposition: "roll_back", action: "roll_back_request", actionStatus: "awaiting_approval", actionDetail: "roll back: waiting for a maintainer" },
  });
  // The evaluation links the triage to its run, which queues the roll-back request once.
  await transaction(db(), "link", (tx) => linkTriageToRun(tx, { triage, created: true, holdsAgents: false }, [run.id]));
  const jobs = await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`triage.rollBack:${triage.id}`}`;
  expect(jobs[0]?.n).toBe(1);
  return { failing, run, triage };
}

async function localDeploy(mode: "revert" | "rerun_last_good") {
  const m = await createUser();
  const v = await createUser();
  const local = await createLocalRepository({ files: { "config.js": "export const replicas = 3;\n" }, checkCommand: "true", members: [[m, "maintainer"], [v, "viewer"]] });
  await db().repository.update({ where: { id: local.repository.id }, data: { rollBackMode: mode } });
  const failingSha = await commitFiles({ repoPath: local.repoPath, branch: "main", files: { "config.js": "export const replicas = 0;\n" }, message: "Scale the web tier down" });
  const t = await triagedFailure({ repositoryId: local.repository.id, failingSha, goodSha: local.sha });
  return { m, v, ...local, failingSha, ...t };
}

describe("roll_back on the local forge", () => {
  it("revert: the approval shows the revert diff; once approved, a revert commit lands on the branch once, reconciled after a crash", async () => {
    const { m, v, dataDir, repoPath, failingSha, run, triage, sha } = await localDeploy("revert");
    const asked = await requestRollBack({ db: db(), triageId: triage.id, dataDir });
    if (asked.status !== "requested") throw new Error(`expected a request, got ${JSON.stringify(asked)}`);
    // The job retried: the same request, not a second one.
    expect(await requestRollBack({ db: db(), triageId: triage.id, dataDir })).toMatchObject({ status: "exists" });
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId }, include: { artifact: true, policyDecision: true } });
    expect(approval.policyDecision?.ruleName).toBe("roll_back_needs_a_person");
    const presented = zPresented.parse(approval.presented);
    expect(presented.rollBack).toMatchObject({ mode: "revert", failingSha, branch: "main", triageId: triage.id });
    expect(approval.artifact?.content).toContain("-export const replicas = 0;\n+export const replicas = 3;");
    expect(presented.message).toContain(`Revert "Scale the web tier down"`);
    expect((await db().triageDecision.findUniqueOrThrow({ where: { id: triage.id } })).actionDetail).toContain(`waiting for approval ${asked.approvalId}`);

    await expect(approveWriteBack({ db: db(), actor: approver(v), approvalId: asked.approvalId, artifactDigest: approval.artifactDigest, headSha: failingSha })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(approveWriteBack({ db: db(), actor: null, approvalId: asked.approvalId, artifactDigest: approval.artifactDigest, headSha: failingSha })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: approval.artifactDigest, headSha: failingSha });
    await expect(approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: approval.artifactDigest, headSha: failingSha })).rejects.toMatchObject({ code: "CONFLICT" });

    const crash = executeWriteBack({
      db: db(),
      forgeFor: localForgeFor(dataDir),
      approvalId: asked.approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    const again = await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId: asked.approvalId });
    const tip = await resolveRevision(repoPath, "main");
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: tip });
    expect((await git(["--git-dir", repoPath, "rev-list", "main"])).trim().split("\n")).toHaveLength(3);
    expect(await git(["--git-dir", repoPath, "show", "main:config.js"])).toBe("export const replicas = 3;\n");
    expect((await git(["--git-dir", repoPath, "rev-parse", "main^"])).trim()).toBe(failingSha);
    expect(await git(["--git-dir", repoPath, "diff", sha, "main"])).toBe("");
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(await git(["--git-dir", repoPath, "log", "-1", "--format=%B", "main"])).toContain(`Airlock-Write-Back: ${wb.idempotencyKey}`);
    expect(wb).toMatchObject({ kind: "roll_back", outcome: "succeeded", stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, artifactDigest: approval.artifactDigest });
  });

  it("rerun_last_good: once approved, the local CI runs the last good deploy's commit once, linked to the run", async () => {
    const { m, dataDir, repository, run, triage, sha } = await localDeploy("rerun_last_good");
    const asked = await requestRollBack({ db: db(), triageId: triage.id, dataDir });
    if (asked.status !== "requested") throw new Error(`expected a request, got ${JSON.stringify(asked)}`);
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } });
    expect(zPresented.parse(approval.presented).rollBack).toMatchObject({ mode: "rerun_last_good", good: { sha } });
    expect(approval.artifactId).toBeNull();
    await approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: null, headSha: null });
    const crash = executeWriteBack({
      db: db(),
      forgeFor: localForgeFor(dataDir),
      approvalId: asked.approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId: asked.approvalId })).toMatchObject({ outcome: "succeeded", reconciled: true });
    const reruns = await db().pipeline.findMany({ where: { repositoryId: repository.id, triggeredByRunId: run.id } });
    expect(reruns).toHaveLength(1);
    expect(reruns[0]?.headSha).toBe(sha);
  });

  it("says why when there is no good deploy to rerun, and an admin chooses the mode in the settings", async () => {
    const admin = await createUser();
    const local = await createLocalRepository({ files: { "a.txt": "a\n" }, members: [[admin, "admin"]] });
    const settings = await callerFor(admin).repositorySettings.get({ repositoryId: local.repository.id });
    expect(settings.policy.rollBackMode).toBe("revert");
    const saved = await callerFor(admin).repositorySettings.updatePolicy({ ...settings.policy, rollBackMode: "rerun_last_good", repositoryId: local.repository.id, expectedVersion: settings.version });
    expect(saved.rollBackMode).toBe("rerun_last_good");
    const { triage } = await triagedFailure({ repositoryId: local.repository.id, failingSha: local.sha });
    expect(await requestRollBack({ db: db(), triageId: triage.id, dataDir: local.dataDir })).toEqual({ status: "refused", detail: "no good deploy to rerun" });
    expect((await db().triageDecision.findUniqueOrThrow({ where: { id: triage.id } })).actionDetail).toContain("no good deploy to rerun");
  });
});

describe("roll_back on GitHub (the test double over HTTP)", () => {
  let gh: FakeGithub;
  beforeAll(async () => {
    gh = await startFakeGithub();
  });
  afterAll(() => gh.close());
  const forgeFor = () => forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });

  it("rerun_last_good reruns the good deploy's workflow run once; a revert is refused with the reason", async () => {
    const m = await createUser();
    const repository = await createRepository({ members: [[m, "maintainer"]] });
    await db().repository.update({ where: { id: repository.id }, data: { forge: "github", rollBackMode: "rerun_last_good" } });
    const { headSha } = gh.createRepository(repository.fullName, { branch: "main", files: { "config.js": "x\n" } });
    const failingSha = gh.pushCommit(repository.fullName, "main", { "config.js": "y\n" }, "Break prod");
    gh.addWorkflowRun(repository.fullName, { id: 7001, status: "completed", conclusion: "success", headSha, headBranch: "main" });
    const { triage } = await triagedFailure({ repositoryId: repository.id, failingSha, goodSha: headSha, goodExternalId: "7001" });
    const asked = await requestRollBack({ db: db(), triageId: triage.id, dataDir: "/nonexistent" });
    if (asked.status !== "requested") throw new Error(`expected a request, got ${JSON.stringify(asked)}`);
    await approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: null, headSha: null });
    const crash = executeWriteBack({
      db: db(),
      forgeFor: forgeFor(),
      approvalId: asked.approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    expect(await executeWriteBack({ db: db(), forgeFor: forgeFor(), approvalId: asked.approvalId })).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: "7001" });
    expect(gh.requests.filter((r) => r.method === "POST" && r.path.endsWith("/actions/runs/7001/rerun"))).toHaveLength(1);
    expect(gh.repo(repository.fullName).workflowRuns.get(7001)?.runAttempt).toBe(2);

    await db().repository.update({ where: { id: repository.id }, data: { rollBackMode: "revert" } });
    const second = await triagedFailure({ repositoryId: repository.id, failingSha });
    const refused = await requestRollBack({ db: db(), triageId: second.triage.id, dataDir: "/nonexistent" });
    expect(refused).toMatchObject({ status: "refused", detail: expect.stringContaining("local forge only") });
    expect(await db().approvalRequest.count({ where: { runId: second.run.id } })).toBe(0);
  });
});
