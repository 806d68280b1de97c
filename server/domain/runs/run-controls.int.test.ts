import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createExecRun, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

const db = () => getDb();

async function setup(status: "suggested" | "queued" = "suggested", maxRetries = 1) {
  const maintainer = await createUser();
  const viewer = await createUser();
  const repo = await createRepository({ members: [[maintainer, "maintainer"], [viewer, "viewer"]] });
  const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries } }));
  const run = await createExecRun({ repositoryId: repo.id, stack, sha: "d".repeat(40), status });
  return { maintainer, viewer, repo, stack, run, caller: callerFor(maintainer) };
}

const jobsFor = (runId: string) =>
  db().$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'run.dispatch' AND j.payload->>'runId' = ${runId}`.then((r) => r[0]?.n ?? 0);
const audits = (objectId: string) => db().auditEntry.findMany({ where: { objectId }, orderBy: { createdAt: "asc" } });

describe("runs.dispatch", () => {
  it("queues a suggestion with its first attempt, an audit entry and a dispatch job; viewers are refused", async () => {
    const { run, caller, viewer, maintainer } = await setup();
    await expect(callerFor(viewer).runs.dispatch({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await caller.runs.dispatch({ runId: run.id })).toEqual({ runId: run.id, status: "queued", attemptNumber: 1, taskKind: "repair" });
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true, events: { orderBy: { seq: "asc" } } } });
    expect(after.status).toBe("queued");
    expect(after.attempts).toMatchObject([{ number: 1, status: "queued", fencingToken: 1 }]);
    expect(after.events.map((e) => e.type)).toEqual(["status", "queue", "status"]);
    expect(await jobsFor(run.id)).toBe(1);
    expect(await audits(run.id)).toMatchObject([{ action: "run.dispatch", actorUserId: maintainer.id }]);
    await expect(caller.runs.dispatch({ runId: run.id })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/only a suggestion/) });
  });
});

describe("runs.retry", () => {
  it("adds a new attempt with a higher fencing token, within the stack's bound", async () => {
    const { run, caller } = await setup("queued", 1);
    await db().dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "failed", fencingToken: 1 } });
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "failed", finishedAt: new Date() } });
    await expect(caller.runs.retry({ runId: run.id, reason: "flaky runner" })).resolves.toEqual({ runId: run.id, status: "queued", attemptNumber: 2 });
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: { orderBy: { number: "asc" } } } });
    expect(after).toMatchObject({ status: "queued", finishedAt: null });
    expect(after.attempts.map((a) => [a.number, a.status, a.fencingToken])).toEqual([
      [1, "failed", 1],
      [2, "queued", 2],
    ]);
    expect(await audits(run.id)).toMatchObject([{ action: "run.retry", detail: { from: "failed", attemptNumber: 2, reason: "flaky runner" } }]);
    expect(await jobsFor(run.id)).toBe(1);

    // Both attempts used (1 retry allowed): refused, with the way forward.
    await db().dispatchAttempt.updateMany({ where: { runId: run.id, number: 2 }, data: { status: "failed" } });
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "failed" } });
    await expect(caller.runs.retry({ runId: run.id })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/All 2 attempts are used.*fork/) });
  });

  it("a run cancelled while queued is retried with a fresh attempt; the one left waiting is closed", async () => {
    const { run, caller } = await setup("suggested", 2);
    await caller.runs.dispatch({ runId: run.id });
    await caller.runs.cancel({ runId: run.id });
    await caller.runs.retry({ runId: run.id });
    const attempts = await db().dispatchAttempt.findMany({ where: { runId: run.id }, orderBy: { number: "asc" } });
    expect(attempts.map((a) => [a.number, a.status, a.fencingToken])).toEqual([
      [1, "cancelled", 1],
      [2, "queued", 2],
    ]);
  });

  it("refuses to retry a run that is still going", async () => {
    const { run, caller } = await setup("queued");
    await expect(caller.runs.retry({ runId: run.id })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});

describe("runs.resume and runs.fork", () => {
  it("resume creates a queued child run whose prompt continues the parent's", async () => {
    const { run, caller, maintainer } = await setup("queued");
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "succeeded" } });
    await db().runEvent.create({ data: { runId: run.id, seq: 1, type: "message", payload: { role: "assistant", text: "Patched sum()." } } });
    await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "fix.patch", content: "x", digest: `sha256:${"e".repeat(64)}`, sizeBytes: 1 } });

    const child = await caller.runs.resume({ runId: run.id, instructions: "Also add a test for an empty list." });
    expect(child.parentRunId).toBe(run.id);
    const row = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: child.runId }, include: { attempts: true } });
    expect(row).toMatchObject({ status: "queued", source: "resume", parentRunId: run.id, actorUserId: maintainer.id, headSha: run.headSha, stackDigest: run.stackDigest });
    expect(row.prompt).toContain(run.prompt);
    expect(row.prompt).toContain(`## Continuation of run #${run.number}`);
    expect(row.prompt).toContain("fix.patch (patch, sha256:");
    expect(row.prompt).toContain("> Patched sum().");
    expect(row.prompt).toContain("Also add a test for an empty list.");
    expect(row.promptHash).not.toBe(run.promptHash);
    expect(row.attempts).toMatchObject([{ number: 1, status: "queued" }]);
    expect(await jobsFor(child.runId)).toBe(1);
    expect(await audits(child.runId)).toMatchObject([{ action: "run.resume", detail: { parentRunId: run.id } }]);
  });

  it("refuses to resume a run that has not finished", async () => {
    const { run, caller } = await setup("queued");
    await expect(caller.runs.resume({ runId: run.id })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/resume it once it has finished/) });
  });

  it("fork takes an edited prompt and another stack's snapshot; the parent is untouched", async () => {
    const { run, caller } = await setup("queued");
    const other = await createStack(scriptedSpec({ model: "other-model" }));
    const child = await caller.runs.fork({ runId: run.id, prompt: "Only diagnose; do not patch.", stackId: other.id });
    const row = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: child.runId } });
    expect(row).toMatchObject({ source: "fork", parentRunId: run.id, prompt: "Only diagnose; do not patch.", stackId: other.id, stackDigest: other.digest, status: "queued" });
    expect(row.stackSnapshot).toMatchObject({ spec: { model: "other-model" } });
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
    expect(await audits(child.runId)).toMatchObject([{ action: "run.fork", detail: { parentRunId: run.id, promptEdited: true, stackDigest: other.digest } }]);
    await expect(caller.runs.fork({ runId: run.id })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
