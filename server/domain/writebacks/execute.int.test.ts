import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { requestWriteBack } from "@/server/domain/approvals/request-write-back";
import { calcPatch, createPatchApproval, createPatchRepository, localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { git } from "@/server/forges/local/git";
import { resolveRevision } from "@/server/forges/local/repositories";
import { runReactions } from "@/server/queue/testing/reactions";
import { createUser } from "@/server/testing/factories";
import { executeWriteBack, retryWriteBack } from "./execute";

const db = () => getDb();

async function approved() {
  const m = await createUser();
  const repo = await createPatchRepository([[m, "maintainer"]]);
  const { approvalId, run } = await createPatchApproval({ repo });
  const a = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
  await approveWriteBack({ db: db(), actor: { id: m.id, email: m.email, isAdmin: false }, approvalId, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
  return { m, repo, approvalId, run };
}

const commitsOn = async (repoPath: string) => (await git(["--git-dir", repoPath, "rev-list", "main"])).trim().split("\n").length;

describe("write-back execution on the local forge", () => {
  it("pushes the approved patch with its trailers and records the provenance; the run succeeds", async () => {
    const { repo, approvalId, run } = await approved();
    await db().repository.update({ where: { id: repo.repository.id }, data: { checkCommand: "true" } });
    const res = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId });
    expect(res).toMatchObject({ outcome: "succeeded", reconciled: false });
    const head = await resolveRevision(repo.repoPath, "main");
    expect(res.externalRef).toBe(head);
    const message = await git(["--git-dir", repo.repoPath, "log", "-1", "--format=%B", "main"]);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(message).toContain(`Airlock-Run: ${run.id}`);
    expect(message).toContain(`Airlock-Approval: ${approvalId}`);
    expect(message).toContain(`Airlock-Write-Back: ${wb.idempotencyKey}`);
    expect(await git(["--git-dir", repo.repoPath, "show", "main:calc.js"])).toContain("return a + b;\n");
    expect(wb).toMatchObject({ outcome: "succeeded", externalRef: head, stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, actor: "tester" });
    expect(wb.approvedBy).toMatch(/@example\.test$/);
    expect(wb.artifactDigest).toMatch(/^sha256:/);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("executed");
    await runReactions(); // the run settles in the approval.decided job
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("succeeded");
    const rerun = await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`rerun:${wb.id}`}`;
    expect(rerun[0]?.n).toBe(1);
    // Running the job again does nothing.
    expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })).toMatchObject({ outcome: "already_recorded" });
    expect(await commitsOn(repo.repoPath)).toBe(2);
  });

  it("a worker killed between the forge call and the record: the retry reconciles, one commit and one WriteBack", async () => {
    const { repo, approvalId } = await approved();
    const crash = executeWriteBack({
      db: db(),
      forgeFor: localForgeFor(repo.dataDir),
      approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    expect(await commitsOn(repo.repoPath)).toBe(2);
    expect((await db().writeBack.findUniqueOrThrow({ where: { approvalId } })).outcome).toBe("pending");
    const again = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId });
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: await resolveRevision(repo.repoPath, "main") });
    expect(await commitsOn(repo.repoPath)).toBe(2);
    expect(await db().writeBack.count({ where: { approvalId } })).toBe(1);
  });

  it("two executions at once push once", async () => {
    const { repo, approvalId } = await approved();
    const results = await Promise.all([0, 1].map(() => executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })));
    expect(results.filter((r) => r.outcome === "succeeded")).toHaveLength(1);
    expect(await commitsOn(repo.repoPath)).toBe(2);
    expect((await db().writeBack.findUniqueOrThrow({ where: { approvalId } })).outcome).toBe("succeeded");
  });

  it("records the forge's error when the branch moved, and a maintainer can retry", async () => {
    const { m, repo, approvalId, run } = await approved();
    const { commitFiles } = await import("@/server/forges/local/repositories");
    await commitFiles({ repoPath: repo.repoPath, branch: "main", files: { "README.md": "moved\n" }, message: "someone pushed" });
    const res = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId });
    expect(res.outcome).toBe("failed");
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(wb.error).toMatch(/branch main moved from/);
    // The repository's people are told, once, with the forge's error and a link to retry.
    const notes = await db().notification.findMany({ where: { runId: run.id, kind: "write_back_failed" } });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ repositoryId: repo.repository.id, href: `/approvals/${approvalId}`, title: expect.stringContaining("push commits") });
    expect(notes[0]?.body).toContain("branch main moved from");
    // Running the job again records nothing and notifies nobody.
    expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), approvalId })).toMatchObject({ outcome: "already_recorded" });
    expect(await db().notification.count({ where: { runId: run.id } })).toBe(1);
    await runReactions(); // the run settles in the approval.decided job
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("failed");
    await expect(retryWriteBack({ db: db(), actor: { userId: m.id, label: m.email }, writeBackId: wb.id, role: "viewer" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await retryWriteBack({ db: db(), actor: { userId: m.id, label: m.email }, writeBackId: wb.id, role: "maintainer" });
    expect(await db().writeBack.findUniqueOrThrow({ where: { id: wb.id } })).toMatchObject({ outcome: "pending", error: null });
    expect(await db().auditEntry.count({ where: { objectId: wb.id, action: "writeback.retry" } })).toBe(1);
    // The retry fails again (the branch is still moved): a second notification, for this failure.
    expect((await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), writeBackId: wb.id })).outcome).toBe("failed");
    expect(await db().notification.count({ where: { runId: run.id, kind: "write_back_failed" } })).toBe(2);
  });

  it("an exempt write-back skips approval but is recorded with its decision and audit, and executes", async () => {
    const repo = await createPatchRepository([]);
    await db().repository.update({ where: { id: repo.repository.id }, data: { writeBackExceptions: ["push_commits"] } });
    const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
    const stack = await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
    const run = await createExecRun({ repositoryId: repo.repository.id, stack, sha: repo.sha });
    // The repository's own code (a push to main), as evaluation records it.
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval", origin: "repository" } });
    const { contentDigest } = await import("@/server/lib/digest");
    const artifact = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: calcPatch, digest: contentDigest(calcPatch), sizeBytes: calcPatch.length } });
    const res = await requestWriteBack({ db: db(), runId: run.id, action: "push_commits", target: { branch: "main", headSha: repo.sha }, artifactId: artifact.id });
    expect(res.kind).toBe("direct");
    if (res.kind !== "direct") return;
    expect(await db().approvalRequest.count({ where: { runId: run.id } })).toBe(0);
    expect(await db().policyDecision.findUniqueOrThrow({ where: { id: res.policyDecisionId } })).toMatchObject({ ruleName: "exempted_write_back_proceeds" });
    expect(await db().auditEntry.count({ where: { objectId: res.writeBackId, action: "writeback.exempt" } })).toBe(1);
    const out = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), writeBackId: res.writeBackId });
    expect(out).toMatchObject({ outcome: "succeeded", externalRef: await resolveRevision(repo.repoPath, "main") });
    expect(await commitsOn(repo.repoPath)).toBe(2);
    await runReactions(); // the run settles in the approval.decided job
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("succeeded");
  });

  it("hostile: a fork's run (or one Airlock cannot place) never pushes without a person, though the repository exempts pushes", async () => {
    const repo = await createPatchRepository([]);
    await db().repository.update({ where: { id: repo.repository.id }, data: { writeBackExceptions: ["push_commits"] } });
    const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
    const stack = await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
    const { contentDigest } = await import("@/server/lib/digest");
    for (const origin of ["fork", null] as const) {
      const run = await createExecRun({ repositoryId: repo.repository.id, stack, sha: repo.sha });
      await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval", origin, isFork: origin === "fork" } });
      const artifact = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: calcPatch, digest: contentDigest(calcPatch), sizeBytes: calcPatch.length } });
      const res = await requestWriteBack({ db: db(), runId: run.id, action: "push_commits", target: { branch: "main", headSha: repo.sha }, artifactId: artifact.id });
      expect(res.kind, String(origin)).toBe("approval");
      const decision = await db().policyDecision.findFirstOrThrow({ where: { subject: { startsWith: `write_back:${run.id}:push_commits` } } });
      expect(decision).toMatchObject({ ruleName: "untrusted_origin_needs_approval", value: true });
    }
    expect(await commitsOn(repo.repoPath)).toBe(1);
  });

  it("a diagnosis comment is posted without approval only when the repository allows bot comments", async () => {
    const repo = await createPatchRepository([]);
    const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
    const stack = await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
    const run = await createExecRun({ repositoryId: repo.repository.id, stack, sha: repo.sha });
    // A run on the repository's own code (a fork's never comments without a person).
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { origin: "repository" } });
    const ask = () => requestWriteBack({ db: db(), runId: run.id, action: "comment", target: { prNumber: 3 }, message: "The sum is off by one.", isDiagnosisComment: true });
    expect((await ask()).kind).toBe("approval");
    await db().repository.update({ where: { id: repo.repository.id }, data: { botCommentsAllowed: true } });
    const direct = await ask();
    expect(direct.kind).toBe("direct");
    if (direct.kind !== "direct") return;
    const out = await executeWriteBack({ db: db(), forgeFor: localForgeFor(repo.dataDir), writeBackId: direct.writeBackId });
    expect(out.outcome).toBe("succeeded");
    const { listLocalNotes } = await import("@/server/forges/local/write-back");
    const notes = await listLocalNotes(repo.dataDir, repo.repository.fullName, 3);
    expect(notes).toHaveLength(1);
    expect(notes[0]?.body).toContain("The sum is off by one.");
  });
});
