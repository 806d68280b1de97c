import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";
import { createPatchApproval, createPatchRepository } from "../approvals/test-fixtures";

describe("runs.cancel", () => {
  it("a viewer calling this maintainer-only procedure gets FORBIDDEN and nothing changes", async () => {
    const viewer = await createUser();
    const repo = await createRepository({ members: [[viewer, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "queued" });
    await expect(callerFor(viewer).runs.cancel({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
    expect(await getDb().auditEntry.count({ where: { objectId: run.id } })).toBe(0);
  });

  it("cancels a running run and its attempt, with a status event and an audit entry", async () => {
    const maintainer = await createUser();
    const repo = await createRepository({ members: [[maintainer, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "running" });
    const db = getDb();
    await db.dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "running", fencingToken: 1 } });
    const res = await callerFor(maintainer).runs.cancel({ runId: run.id, reason: "wrong branch" });
    expect(res).toMatchObject({ from: "running", attemptsCancelled: 1 });
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true, events: true } });
    expect(after.status).toBe("cancelled");
    expect(after.attempts[0]?.status).toBe("cancelled");
    expect(after.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(after.lastEventSeq).toBe(2);
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: run.id } });
    expect(audit).toMatchObject({ action: "run.cancel", actorUserId: maintainer.id });
  });

  it("cancelling a run awaiting approval withdraws its pending approvals: none stays approvable", async () => {
    const maintainer = await createUser();
    const approver = await createUser();
    const repo = await createPatchRepository([[maintainer, "maintainer"], [approver, "maintainer"]]);
    const { run, approvalId } = await createPatchApproval({ repo, actorUserId: maintainer.id });
    const db = getDb();
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("awaiting_approval");
    const res = await callerFor(maintainer).runs.cancel({ runId: run.id, reason: "superseded" });
    expect(res).toMatchObject({ from: "awaiting_approval", approvalsWithdrawn: 1 });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "expired", reason: "withdrawn: the run was cancelled (superseded)" });
    await expect(callerFor(approver).approvals.approve({ approvalId, artifactDigest: "sha256:x", targetHeadSha: null } as never)).rejects.toBeTruthy();
    expect(await db.writeBack.count({ where: { runId: run.id, outcome: "succeeded" } })).toBe(0);
  });

  it("two cancels racing: exactly one wins, the other is told why", async () => {
    const maintainer = await createUser();
    const repo = await createRepository({ members: [[maintainer, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "queued" });
    const caller = callerFor(maintainer);
    const results = await Promise.allSettled([caller.runs.cancel({ runId: run.id }), caller.runs.cancel({ runId: run.id })]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected");
    expect(loser).toMatchObject({ reason: { code: "CONFLICT", message: expect.stringMatching(/already cancelled/) } });
    expect(await getDb().auditEntry.count({ where: { objectId: run.id } })).toBe(1);
  });

  it("refuses to cancel a finished run", async () => {
    const maintainer = await createUser();
    const repo = await createRepository({ members: [[maintainer, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "succeeded" });
    await expect(callerFor(maintainer).runs.cancel({ runId: run.id })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});
