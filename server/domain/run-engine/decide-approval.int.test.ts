import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { resolveRevision } from "@/server/forges/local/repositories";
import { runReactions } from "@/server/queue/testing/reactions";
import { callerFor, createUser } from "@/server/testing/factories";
import { approveWriteBack, rejectWriteBack } from "./decide-approval";
import { createPatchApproval, createPatchRepository } from "../approvals/test-fixtures";

const db = () => getDb();
const digestOf = async (approvalId: string) => {
  const a = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
  return { artifactDigest: a.artifactDigest, headSha: a.targetHeadSha };
};

describe("the approvals gate", () => {
  it("two maintainers approving the same request at the same moment make exactly one write-back", async () => {
    const [m1, m2] = [await createUser(), await createUser()];
    const repo = await createPatchRepository([[m1, "maintainer"], [m2, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    const shown = await digestOf(approvalId);
    const results = await Promise.allSettled([
      callerFor(m1).approvals.approve({ approvalId, ...shown }),
      callerFor(m2).approvals.approve({ approvalId, ...shown }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "CONFLICT", message: expect.stringMatching(/already approved by/) } });
    expect(await db().writeBack.count({ where: { approvalId } })).toBe(1);
    expect(await db().auditEntry.count({ where: { objectId: approvalId, action: "approval.approve" } })).toBe(1);
    const jobs = await db().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`writeback:${approvalId}`}`;
    expect(jobs[0]?.n).toBe(1);
  });

  it("approve and reject racing: exactly one outcome, the other is told why", async () => {
    const [m1, m2] = [await createUser(), await createUser()];
    const repo = await createPatchRepository([[m1, "maintainer"], [m2, "admin"]]);
    const { approvalId, run } = await createPatchApproval({ repo });
    const shown = await digestOf(approvalId);
    const results = await Promise.allSettled([
      callerFor(m1).approvals.approve({ approvalId, ...shown }),
      callerFor(m2).approvals.reject({ approvalId, reason: "not this way" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "CONFLICT", message: expect.stringMatching(/already (approved|rejected)/) } });
    const after = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    const writeBacks = await db().writeBack.count({ where: { approvalId } });
    if (after.status === "approved") expect(writeBacks).toBe(1);
    else {
      expect(after.status).toBe("rejected");
      expect(writeBacks).toBe(0);
      await runReactions();
      expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("escalated");
    }
  });

  it("refuses a viewer, an anonymous caller and the triggering actor under the two-person rule", async () => {
    const [viewer, actor, other] = [await createUser(), await createUser(), await createUser()];
    const repo = await createPatchRepository([[viewer, "viewer"], [actor, "maintainer"], [other, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo, actorUserId: actor.id });
    const shown = await digestOf(approvalId);
    await expect(callerFor(viewer).approvals.approve({ approvalId, ...shown })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(null).approvals.approve({ approvalId, ...shown })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(callerFor(actor).approvals.approve({ approvalId, ...shown })).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/two-person rule/) });
    // The domain refuses them too, whatever calls it.
    await expect(approveWriteBack({ db: db(), actor: { id: viewer.id, email: viewer.email, isAdmin: false }, approvalId, ...shown })).rejects.toMatchObject({ reason: "repository_role" });
    await expect(approveWriteBack({ db: db(), actor: null, approvalId, ...shown })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    expect(await db().writeBack.count({ where: { approvalId } })).toBe(0);
    // Someone else may approve; with the rule turned off the actor may too.
    await expect(callerFor(other).approvals.approve({ approvalId, ...shown })).resolves.toMatchObject({ approvalId });
    await db().repository.update({ where: { id: repo.repository.id }, data: { twoPersonRule: false } });
    const second = await createPatchApproval({ repo, actorUserId: actor.id });
    await expect(callerFor(actor).approvals.approve({ approvalId: second.approvalId, ...(await digestOf(second.approvalId)) })).resolves.toMatchObject({ approvalId: second.approvalId });
  });

  it("refuses an approval whose artifact digest or head SHA is not what the approver saw", async () => {
    const m = await createUser();
    const repo = await createPatchRepository([[m, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    const shown = await digestOf(approvalId);
    await expect(callerFor(m).approvals.approve({ approvalId, artifactDigest: `sha256:${"0".repeat(64)}`, headSha: shown.headSha })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/stale/) });
    await expect(callerFor(m).approvals.approve({ approvalId, artifactDigest: shown.artifactDigest, headSha: "f".repeat(40) })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
  });

  it("refuses a stale approval when the branch head moved, and makes a new request at the new head", async () => {
    const m = await createUser();
    const repo = await createPatchRepository([[m, "maintainer"]]);
    const { approvalId, run } = await createPatchApproval({ repo });
    const shown = await digestOf(approvalId);
    const { commitFiles } = await import("@/server/forges/local/repositories");
    const moved = await commitFiles({ repoPath: repo.repoPath, branch: "main", files: { "README.md": "moved\n" }, message: "someone pushed" });
    const branchHead = (_: string, branch: string) => resolveRevision(repo.repoPath, branch);
    const err = await approveWriteBack({ db: db(), actor: { id: m.id, email: m.email, isAdmin: false }, approvalId, ...shown, branchHead }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "PRECONDITION_FAILED", reason: "stale" });
    const old = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(old).toMatchObject({ status: "expired", reason: expect.stringMatching(/^stale: the target head moved/) });
    const fresh = await db().approvalRequest.findFirstOrThrow({ where: { runId: run.id, status: "pending" } });
    expect(fresh.targetHeadSha).toBe(moved);
    expect((err as { details: { newApprovalId: string } }).details.newApprovalId).toBe(fresh.id);
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(0);
    expect(await db().auditEntry.count({ where: { objectId: approvalId, action: "approval.stale" } })).toBe(1);
  });

  it("refuses a stale approval when the pull request's head moved", async () => {
    const m = await createUser();
    const repo = await createPatchRepository([[m, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    await db().pullRequest.create({ data: { repositoryId: repo.repository.id, number: 7, title: "t", author: "a", headRef: "main", headSha: "a".repeat(40), baseRef: "main" } });
    await db().approvalRequest.update({ where: { id: approvalId }, data: { targetPrNumber: 7 } });
    await expect(callerFor(m).approvals.approve({ approvalId, ...(await digestOf(approvalId)) })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/head moved/) });
  });

  it("refuses an expired approval and marks it expired", async () => {
    const m = await createUser();
    const repo = await createPatchRepository([[m, "maintainer"]]);
    const { approvalId, run } = await createPatchApproval({ repo, ttlMs: 1000, now: new Date(Date.now() - 60_000) });
    await expect(callerFor(m).approvals.approve({ approvalId, ...(await digestOf(approvalId)) })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/^This approval expired at \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/) });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("expired");
    await runReactions();
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("escalated");
    expect(await db().auditEntry.count({ where: { objectId: approvalId, action: "approval.expire" } })).toBe(1);
  });

  it("a rejection needs a reason and is audited", async () => {
    const m = await createUser();
    const repo = await createPatchRepository([[m, "maintainer"]]);
    const { approvalId } = await createPatchApproval({ repo });
    await expect(callerFor(m).approvals.reject({ approvalId, reason: "  " })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(rejectWriteBack({ db: db(), actor: { id: m.id, email: m.email, isAdmin: false }, approvalId, reason: " " })).rejects.toMatchObject({ reason: "reason_required" });
    await callerFor(m).approvals.reject({ approvalId, reason: "wrong fix" });
    const audit = await db().auditEntry.findFirstOrThrow({ where: { objectId: approvalId, objectType: "ApprovalRequest" } });
    expect(audit).toMatchObject({ action: "approval.reject", actorUserId: m.id });
  });
});
