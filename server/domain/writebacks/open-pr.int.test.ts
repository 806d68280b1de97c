import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { untrustedOriginKinds } from "@/server/domain/policy/shipped/change-gate";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { calcBefore, calcPatch, createPatchRepository, localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { zPresented } from "@/server/domain/approvals/schemas";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { git } from "@/server/forges/local/git";
import { resolveRevision } from "@/server/forges/local/repositories";
import { writeBackMarker } from "@/server/forges/types";
import { contentDigest } from "@/server/lib/digest";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { runReactions } from "@/server/queue/testing/reactions";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { executeWriteBack } from "./execute";
import { forgeResolver } from "./forges";
import { getPolicy, savePolicyVersion } from "@/server/domain/policy/store";
import { requestOpenPr } from "./open-pr";

// open_pr end to end: a maintainer asks, the approval shows the new branch, base, title and body,
// a person approves, the executor pushes a new branch with the approved patch and opens the PR
// once (local forge: real git and a PullRequest record; GitHub: the test double over HTTP).

const db = () => getDb();
const actorOf = (u: { id: string; email: string }) => ({ userId: u.id, label: u.email });
const approver = (u: { id: string; email: string }) => ({ id: u.id, email: u.email, isAdmin: false });

async function patchRun(opts: { isFork?: boolean; approvalMode?: "always" | "exceptions_allowed"; actorUserId?: string } = {}) {
  const m = await createUser();
  const v = await createUser();
  const repo = await createPatchRepository([
    [m, "maintainer"],
    [v, "viewer"],
  ]);
  const stack = opts.approvalMode ? await createStack(scriptedSpec({ approvalMode: opts.approvalMode })) : repo.stack;
  const run = await createExecRun({ repositoryId: repo.repository.id, stack, sha: repo.sha, isFork: opts.isFork, actorUserId: opts.actorUserId ?? null });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval", origin: opts.isFork ? "fork" : "repository" } });
  const artifact = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: calcPatch, digest: contentDigest(calcPatch), sizeBytes: Buffer.byteLength(calcPatch) } });
  return { m, v, repo, run, artifact };
}

async function approvedOpenPr() {
  const g = await patchRun();
  const asked = await requestOpenPr({ db: db(), runId: g.run.id, by: actorOf(g.m), input: { title: "Fix sum()", notes: "Ping @octocat <b>now</b>" } });
  if (asked.kind !== "approval") throw new Error("expected an approval");
  await approveWriteBack({ db: db(), actor: approver(g.m), approvalId: asked.approvalId, artifactDigest: g.artifact.digest, headSha: g.repo.sha });
  return { ...g, approvalId: asked.approvalId, openPr: asked.openPr };
}

describe("open_pr on the local forge", () => {
  it("shows the branch, base, title and body; once approved, pushes a new branch and opens the PR with exactly that body", async () => {
    const { repo, run, approvalId, openPr, artifact } = await approvedOpenPr();
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    const presented = zPresented.parse(approval.presented);
    expect(presented.openPr).toEqual(openPr);
    expect(openPr).toMatchObject({ branch: `airlock/run-${run.number}`, base: "main", fromSha: repo.sha, title: "Fix sum()" });
    // The agent's words are inert: no live mention, no HTML.
    expect(openPr.body).toContain("@\u200Boctocat &lt;b&gt;now&lt;/b&gt;");
    expect(openPr.body).toContain(artifact.digest);

    const res = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId });
    expect(res).toMatchObject({ outcome: "succeeded", reconciled: false });
    const tip = await resolveRevision(repo.repoPath, openPr.branch);
    expect(tip).not.toBeNull();
    expect(await resolveRevision(repo.repoPath, "main")).toBe(repo.sha); // main untouched
    expect(await git(["--git-dir", repo.repoPath, "show", `${openPr.branch}:calc.js`])).toContain("return a + b;\n");
    expect((await git(["--git-dir", repo.repoPath, "rev-parse", `${openPr.branch}~1`])).trim()).toBe(repo.sha);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(await git(["--git-dir", repo.repoPath, "log", "-1", "--format=%B", openPr.branch])).toContain(`Airlock-Write-Back: ${wb.idempotencyKey}`);
    const prs = await db().pullRequest.findMany({ where: { repositoryId: repo.repository.id } });
    expect(prs).toHaveLength(1);
    expect(prs[0]).toMatchObject({ title: "Fix sum()", headRef: openPr.branch, baseRef: "main", headSha: tip, state: "open", body: `${openPr.body}\n\n${writeBackMarker(wb.idempotencyKey)}` });
    expect(res.externalRef).toBe(`#${prs[0]?.number}`);
    expect(wb).toMatchObject({ kind: "open_pr", outcome: "succeeded", stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, artifactDigest: artifact.digest });
    expect(wb.approvedBy).toMatch(/@example\.test$/);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("executed");
    await runReactions();
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("succeeded");
  });

  it("a worker killed between the forge call and the record: the retry reconciles, one branch commit and one PR", async () => {
    const { repo, approvalId, openPr } = await approvedOpenPr();
    const crash = executeWriteBack({
      db: db(),
      forgeFor: localForgeFor(repo.dataDir),
      approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    const tip = await resolveRevision(repo.repoPath, openPr.branch);
    expect((await db().writeBack.findUniqueOrThrow({ where: { approvalId } })).outcome).toBe("pending");
    const again = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId });
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true });
    expect(await resolveRevision(repo.repoPath, openPr.branch)).toBe(tip);
    expect(await db().pullRequest.count({ where: { repositoryId: repo.repository.id } })).toBe(1);
    expect((await git(["--git-dir", repo.repoPath, "rev-list", openPr.branch])).trim().split("\n")).toHaveLength(2);
  });

  it("a crash after the branch was pushed and before the PR record: the retry reuses the branch and opens one PR", async () => {
    const { repo, approvalId, openPr } = await approvedOpenPr();
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    // The executor died inside the forge call, after its push: the PR record was never written.
    const forge = localForgeFor(repo.dataDir)();
    await forge.executeWriteBack({ kind: "open_pr", idempotencyKey: wb.idempotencyKey, runId: wb.runId, approvalId, target: { repository: repo.repository.fullName, branch: openPr.branch, headSha: repo.sha }, patch: calcPatch, message: "Fix sum()", openPr });
    await db().pullRequest.deleteMany({ where: { repositoryId: repo.repository.id } });
    const tip = await resolveRevision(repo.repoPath, openPr.branch);
    expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })).toMatchObject({ outcome: "succeeded" });
    expect(await resolveRevision(repo.repoPath, openPr.branch)).toBe(tip);
    expect(await db().pullRequest.count({ where: { repositoryId: repo.repository.id, headRef: openPr.branch } })).toBe(1);
  });

  it("a replayed approve writes once, and a second request for the run is refused", async () => {
    const { m, repo, run, approvalId } = await approvedOpenPr();
    await expect(approveWriteBack({ db: db(), actor: approver(m), approvalId, artifactDigest: calcDigest(), headSha: repo.sha })).rejects.toMatchObject({ code: "CONFLICT" });
    const results = await Promise.all([0, 1].map(() => executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })));
    expect(results.filter((r) => r.outcome === "succeeded")).toHaveLength(1);
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(1);
    expect(await db().pullRequest.count({ where: { repositoryId: repo.repository.id } })).toBe(1);
    await expect(requestOpenPr({ db: db(), runId: run.id, by: actorOf(m) })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("refuses a run whose branch already has a PR, with the reason", async () => {
    const { m, repo, run } = await patchRun();
    await db().pullRequest.create({ data: { repositoryId: repo.repository.id, number: 7, title: "Existing", author: "someone", headRef: "main", headSha: repo.sha, baseRef: "release" } });
    await expect(requestOpenPr({ db: db(), runId: run.id, by: actorOf(m) })).rejects.toThrow("The run's branch main already has pull request #7: its patch goes to that PR's branch, not to a new PR.");
    expect(await db().approvalRequest.count({ where: { runId: run.id } })).toBe(0);
  });

  it("a viewer cannot ask; neither a signed-out agent nor the run's own actor (two-person rule) can approve", async () => {
    const actor = await createUser();
    const { m, v, repo, run, artifact } = await patchRun({ actorUserId: actor.id });
    await db().membership.create({ data: { userId: actor.id, repositoryId: repo.repository.id, role: "maintainer" } });
    await db().repository.update({ where: { id: repo.repository.id }, data: { twoPersonRule: true } });
    await expect(callerFor(v).writeBacks.requestOpenPr({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(null).writeBacks.requestOpenPr({ runId: run.id })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const asked = await callerFor(m).writeBacks.requestOpenPr({ runId: run.id, branch: "fix/sum" });
    expect(asked.kind).toBe("approval");
    if (asked.kind !== "approval") return;
    await expect(approveWriteBack({ db: db(), actor: null, approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: repo.sha })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(approveWriteBack({ db: db(), actor: approver(v), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: repo.sha })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(approveWriteBack({ db: db(), actor: approver(actor), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: repo.sha })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(0);
  });

  it("refuses a branch name git could read as an option, or the base itself", async () => {
    const { m, run } = await patchRun();
    await expect(requestOpenPr({ db: db(), runId: run.id, by: actorOf(m), input: { branch: "--upload-pack=x" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(requestOpenPr({ db: db(), runId: run.id, by: actorOf(m), input: { branch: "a/../b" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(requestOpenPr({ db: db(), runId: run.id, by: actorOf(m), input: { branch: "main" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("an exempt open_pr proceeds for the repository's own code, but a fork's run always waits for a person", async () => {
    for (const isFork of [false, true]) {
      const { m, repo, run } = await patchRun({ isFork, approvalMode: "exceptions_allowed" });
      await db().repository.update({ where: { id: repo.repository.id }, data: { writeBackExceptions: ["open_pr"] } });
      const asked = await requestOpenPr({ db: db(), runId: run.id, by: actorOf(m) });
      const decision = await db().policyDecision.findUniqueOrThrow({ where: { id: asked.policyDecisionId ?? "" } });
      if (isFork) {
        expect(asked.kind).toBe("approval");
        expect(decision.ruleName).toBe("untrusted_origin_needs_approval");
      } else {
        expect(asked.kind).toBe("direct");
        expect(decision.ruleName).toBe("exempted_write_back_proceeds");
        if (asked.kind !== "direct") continue;
        expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), writeBackId: asked.writeBackId })).toMatchObject({ outcome: "succeeded" });
        expect(await db().pullRequest.count({ where: { repositoryId: repo.repository.id } })).toBe(1);
      }
    }
  });
});

describe("open_pr under a stored change gate from before its fork rule", () => {
  it("a fork's run still waits for a person: its repository exception is not claimed", async () => {
    // The change gate as stored before untrusted_origin_needs_approval existed.
    const admin = await createUser({ isAdmin: true });
    const current = await getPolicy({ db: db(), kind: "change_gate" });
    const forkPr = JSON.stringify({ all: [{ property: "kind", inList: untrustedOriginKinds }, { property: "run_origin", isNot: "repository" }] });
    const emptyNone = (x: unknown) => typeof x === "object" && x !== null && Array.isArray((x as { none?: unknown }).none) && (x as { none: unknown[] }).none.length === 0;
    const strip = (v: unknown): unknown =>
      Array.isArray(v) ? v.filter((x) => JSON.stringify(x) !== forkPr).map(strip).filter((x) => !emptyNone(x)) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, strip(x)])) : v;
    const older = strip(structuredClone(current.current.definition)) as typeof current.current.definition;
    older.rules = older.rules.filter((r) => r.name !== "untrusted_origin_needs_approval");
    await savePolicyVersion({ db: db(), actor: { userId: admin.id, label: admin.email }, kind: "change_gate", definition: older, expectedVersion: current.version });
    const { m, repo, run } = await patchRun({ isFork: true, approvalMode: "exceptions_allowed" });
    await db().repository.update({ where: { id: repo.repository.id }, data: { writeBackExceptions: ["open_pr"] } });
    const asked = await requestOpenPr({ db: db(), runId: run.id, by: actorOf(m) });
    expect(asked.kind).toBe("approval");
    expect((await db().policyDecision.findUniqueOrThrow({ where: { id: asked.policyDecisionId ?? "" } })).ruleName).toBe("unexempted_write_back_needs_approval");
  });
});

const calcDigest = () => contentDigest(calcPatch);

describe("open_pr on GitHub (the test double over HTTP)", () => {
  let gh: FakeGithub;
  beforeAll(async () => {
    gh = await startFakeGithub();
  });
  afterAll(() => gh.close());
  const forgeFor = () => forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });

  it("POSTs /pulls from a new branch once, even when the worker dies between the forge call and the record", async () => {
    const m = await createUser();
    const repository = await createRepository({ members: [[m, "maintainer"]] });
    await db().repository.update({ where: { id: repository.id }, data: { forge: "github" } });
    const { headSha } = gh.createRepository(repository.fullName, { branch: "main", files: { "calc.js": calcBefore } });
    const run = await createExecRun({ repositoryId: repository.id, stack: await createStack(scriptedSpec()), sha: headSha });
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval", origin: "repository" } });
    const artifact = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: calcPatch, digest: calcDigest(), sizeBytes: calcPatch.length } });
    const asked = await requestOpenPr({ db: db(), runId: run.id, by: actorOf(m), input: { title: "Fix sum()" } });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    await approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha });
    const crash = executeWriteBack({
      db: db(),
      forgeFor: forgeFor(),
      approvalId: asked.approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    const again = await executeWriteBack({ db: db(), forgeFor: forgeFor(), approvalId: asked.approvalId });
    const pulls = [...gh.repo(repository.fullName).openedPulls.values()];
    expect(pulls).toHaveLength(1);
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: `#${pulls[0]?.number}` });
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(pulls[0]).toMatchObject({ title: "Fix sum()", head: asked.openPr.branch, base: "main", body: `${asked.openPr.body}\n\n${writeBackMarker(wb.idempotencyKey)}` });
    expect(gh.filesAt(repository.fullName, asked.openPr.branch)["calc.js"]).toContain("return a + b;\n");
    expect(gh.branchHead(repository.fullName, "main")).toBe(headSha);
    expect(gh.requests.filter((r) => r.method === "POST" && r.path.endsWith("/pulls"))).toHaveLength(1);
    expect(gh.requests.filter((r) => r.method === "POST" && r.path.endsWith("/git/refs"))).toHaveLength(1);
  });
});
