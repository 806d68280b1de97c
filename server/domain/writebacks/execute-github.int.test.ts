import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { requestWriteBack } from "@/server/domain/approvals/request-write-back";
import { calcBefore, calcPatch } from "@/server/domain/approvals/test-fixtures";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { contentDigest } from "@/server/lib/digest";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { createRepository, createUser } from "@/server/testing/factories";
import { runReactions } from "@/server/queue/testing/reactions";
import { executeWriteBack, retryWriteBack } from "./execute";
import { forgeResolver } from "./forges";

// The execute job against a GitHub repository, with Octokit pointed at a fake GitHub: the
// approved patch lands once even when the worker dies between the forge call and the record,
// and GitHub's errors are recorded for the maintainer.

const db = () => getDb();
let gh: FakeGithub;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const forgeFor = () => forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });

async function githubRun() {
  const m = await createUser();
  const repository = await createRepository({ members: [[m, "maintainer"]] });
  await db().repository.update({ where: { id: repository.id }, data: { forge: "github" } });
  const { headSha } = gh.createRepository(repository.fullName, { branch: "fix-sum", files: { "calc.js": calcBefore }, pulls: [12] });
  const stack = await createStack(scriptedSpec());
  const run = await createExecRun({ repositoryId: repository.id, stack, sha: headSha });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval" } });
  const artifact = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: calcPatch, digest: contentDigest(calcPatch), sizeBytes: calcPatch.length } });
  return { m, repository, headSha, run, artifact };
}

async function approvedPatch() {
  const g = await githubRun();
  const asked = await requestWriteBack({ db: db(), runId: g.run.id, action: "update_pr_branch", target: { branch: "fix-sum", prNumber: 12, headSha: g.headSha }, artifactId: g.artifact.id, message: "Fix sum()" });
  if (asked.kind !== "approval") throw new Error("expected an approval");
  await approveWriteBack({ db: db(), actor: { id: g.m.id, email: g.m.email, isAdmin: false }, approvalId: asked.approvalId, artifactDigest: g.artifact.digest, headSha: g.headSha });
  return { ...g, approvalId: asked.approvalId };
}

describe("write-back execution on GitHub (fake GitHub over HTTP)", () => {
  it("a worker killed between the forge call and the record: the retry finds the commit, one commit and one WriteBack", async () => {
    const { repository, approvalId, headSha, run } = await approvedPatch();
    await expect(
      executeWriteBack({
        db: db(),
        forgeFor: forgeFor(),
        approvalId,
        afterForgeCall: () => {
          throw new Error("worker killed");
        },
      }),
    ).rejects.toThrow("worker killed");
    const pushed = gh.branchHead(repository.fullName, "fix-sum");
    expect(pushed).not.toBe(headSha);
    expect(gh.filesAt(repository.fullName, "fix-sum")["calc.js"]).toContain("return a + b;\n");
    expect((await db().writeBack.findUniqueOrThrow({ where: { approvalId } })).outcome).toBe("pending");

    const again = await executeWriteBack({ db: db(), forgeFor: forgeFor(), approvalId });
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: pushed });
    expect(gh.history(repository.fullName, "fix-sum")).toHaveLength(2);
    expect(gh.repo(repository.fullName).commits.size).toBe(2);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(wb).toMatchObject({ outcome: "succeeded", externalRef: pushed, kind: "update_pr_branch" });
    expect(wb.approvedBy).toMatch(/@example\.test$/);
    expect(gh.commit(repository.fullName, pushed as string)?.message).toContain(`Airlock-Approval: ${approvalId}\nAirlock-Write-Back: ${wb.idempotencyKey}`);
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(1);
    await runReactions(); // the run settles in the approval.decided job
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("succeeded");
  });

  it("a GitHub 5xx is recorded with GitHub's message; the maintainer's retry pushes it once", async () => {
    const { m, repository, approvalId } = await approvedPatch();
    gh.intercept((r) => (r.method === "POST" && r.path.endsWith("/git/trees") ? { status: 503, body: { message: "Service Unavailable" } } : undefined));
    const failed = await executeWriteBack({ db: db(), forgeFor: forgeFor(), approvalId });
    gh.intercept(null);
    expect(failed.outcome).toBe("failed");
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(wb.error).toBe("GitHub refused to commit to fix-sum: 503 Service Unavailable");
    const event = await db().runEvent.findFirst({ where: { runId: wb.runId, type: "write_back_completed" }, orderBy: { seq: "desc" } });
    expect(event?.payload).toMatchObject({ outcome: "failed", error: "GitHub refused to commit to fix-sum: 503 Service Unavailable" });
    await retryWriteBack({ db: db(), actor: { userId: m.id, label: m.email }, writeBackId: wb.id, role: "maintainer" });
    expect(await executeWriteBack({ db: db(), forgeFor: forgeFor(), writeBackId: wb.id })).toMatchObject({ outcome: "succeeded", reconciled: false });
    expect(gh.history(repository.fullName, "fix-sum")).toHaveLength(2);
  });

  it("an exempt diagnosis comment is posted once even when the record is lost", async () => {
    const { repository, run } = await githubRun();
    await db().repository.update({ where: { id: repository.id }, data: { botCommentsAllowed: true } });
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { origin: "repository", stackSnapshot: (await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }))).snapshot } });
    const asked = await requestWriteBack({ db: db(), runId: run.id, action: "comment", target: { prNumber: 12 }, message: "sum() adds one too many.", isDiagnosisComment: true });
    expect(asked.kind).toBe("direct");
    if (asked.kind !== "direct") return;
    const crash = executeWriteBack({
      db: db(),
      forgeFor: forgeFor(),
      writeBackId: asked.writeBackId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    const out = await executeWriteBack({ db: db(), forgeFor: forgeFor(), writeBackId: asked.writeBackId });
    const comments = gh.repo(repository.fullName).comments.get(12) ?? [];
    expect(comments).toHaveLength(1);
    expect(out).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: String(comments[0]?.id) });
    expect(comments[0]?.body).toContain("sum() adds one too many.");
  });
});
