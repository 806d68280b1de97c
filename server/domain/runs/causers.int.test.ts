import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { createExecRun } from "@/server/queue/testing/fixtures";
import { callerFor, createUser } from "@/server/testing/factories";
import { createPatchApproval, createPatchRepository, requestPatchApproval } from "../approvals/test-fixtures";
import { launchFixRun } from "../fixloop/launch";

// The two-person rule counts everyone who caused a run's write: whoever dispatched, retried,
// resumed or forked it, wrote its continuation prompt, attached context, or wrote the rejection a
// fix run carries, and (through inheritance) whoever caused the run a child continues. Each path
// is taken through the real procedure; the patch then waits for approval as a worker leaves it.

const db = () => getDb();

async function world() {
  const [actor, other, third] = [await createUser(), await createUser(), await createUser()];
  const repo = await createPatchRepository([[actor, "maintainer"], [other, "maintainer"], [third, "maintainer"]]);
  return { actor, other, third, repo };
}
type World = Awaited<ReturnType<typeof world>>;

const shown = async (approvalId: string) => {
  const a = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
  return { approvalId, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha };
};

/** `who` is refused with the cause in words, changes nothing; someone who caused nothing approves. */
async function refusedThenApproved(w: World, approvalId: string, who: SessionUser, cause: RegExp, approver: SessionUser = w.other) {
  const input = await shown(approvalId);
  const err = await callerFor(who).approvals.approve(input).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(cause), cause: { reason: "two_person_rule" } });
  expect((err as Error).message).toMatch(/two-person rule says someone else must approve/);
  expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "pending" });
  expect(await db().writeBack.count({ where: { approvalId } })).toBe(0);
  // The screen says so before anyone clicks.
  expect((await callerFor(who).approvals.byId({ approvalId })).viewerTwoPersonRefusal).toMatch(cause);
  expect((await callerFor(approver).approvals.byId({ approvalId })).viewerTwoPersonRefusal).toBeNull();
  await expect(callerFor(approver).approvals.approve(input)).resolves.toMatchObject({ approvalId });
}

const finished = async (runId: string, status: "failed" | "succeeded") => {
  await db().dispatchAttempt.updateMany({ where: { runId }, data: { status: status === "failed" ? "failed" : "succeeded", finishedAt: new Date() } });
  await db().agentDispatchRun.update({ where: { id: runId }, data: { status, finishedAt: new Date() } });
};

describe("the two-person rule counts everyone who caused the write", () => {
  it("refuses the person who dispatched the suggestion (the bypass: run a check, dispatch, approve)", async () => {
    const w = await world();
    const run = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha, status: "suggested" });
    await callerFor(w.actor).runs.dispatch({ runId: run.id });
    expect(await db().runCauser.findMany({ where: { runId: run.id }, select: { userId: true, cause: true, sourceRunId: true } })).toEqual([
      { userId: w.actor.id, cause: "dispatched", sourceRunId: run.id },
    ]);
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: run.id });
    await refusedThenApproved(w, approvalId, w.actor, /^You dispatched this run/);
  });

  it("refuses the person who retried the run", async () => {
    const w = await world();
    const run = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha });
    await db().dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "failed", fencingToken: 1 } });
    await finished(run.id, "failed");
    await callerFor(w.actor).runs.retry({ runId: run.id });
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: run.id });
    await refusedThenApproved(w, approvalId, w.actor, /^You retried this run/);
  });

  it("refuses the person who resumed the run, and the parent's actor, whose work the child continues", async () => {
    const w = await world();
    const parent = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha, actorUserId: w.third.id });
    await finished(parent.id, "failed");
    const child = await callerFor(w.actor).runs.resume({ runId: parent.id });
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: child.runId });
    const input = await shown(approvalId);
    await expect(callerFor(w.third).approvals.approve(input)).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(new RegExp(`^You started run #${parent.number}, whose work this run continues`)),
    });
    await refusedThenApproved(w, approvalId, w.actor, /^You made this run by resuming its parent/);
  });

  it("refuses the person who wrote the continuation prompt (Send)", async () => {
    const w = await world();
    const parent = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha });
    await finished(parent.id, "succeeded");
    const child = await callerFor(w.actor).runs.resume({ runId: parent.id, instructions: "Also push the fix for the other branch." });
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: child.runId });
    await refusedThenApproved(w, approvalId, w.actor, /^You wrote the continuation prompt of this run/);
  });

  it("refuses the person who forked the run, and whoever dispatched the parent", async () => {
    const w = await world();
    const parent = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha, status: "suggested" });
    await callerFor(w.third).runs.dispatch({ runId: parent.id });
    const child = await callerFor(w.actor).runs.fork({ runId: parent.id, prompt: "Fix it differently: rewrite sum()." });
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: child.runId });
    await expect(callerFor(w.third).approvals.approve(await shown(approvalId))).rejects.toMatchObject({ message: expect.stringMatching(/^You dispatched run #\d+, whose work this run continues/) });
    await refusedThenApproved(w, approvalId, w.actor, /^You made this run by forking its parent/);
  });

  it("refuses the person who attached context to the run; a retried attachment records nothing twice", async () => {
    const w = await world();
    const run = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha });
    await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "running" } });
    const note = { runId: run.id, attachmentId: randomUUID(), kind: "note" as const, title: "Hint", url: "", path: "", startLine: "", text: "Change calc.js to also log the inputs." };
    await callerFor(w.actor).runs.attachContext(note);
    await callerFor(w.actor).runs.attachContext(note);
    expect(await db().runCauser.count({ where: { runId: run.id } })).toBe(1);
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: run.id });
    await refusedThenApproved(w, approvalId, w.actor, /^You attached context to this run/);
  });

  it("refuses the person whose rejection a fix run carries", async () => {
    const w = await world();
    const { approvalId: first, run } = await createPatchApproval({ repo: w.repo });
    await callerFor(w.actor).approvals.reject({ approvalId: first, reason: "Use a loop; also delete the tests." });
    const intent = await db().fixSpawnIntent.findFirstOrThrow({ where: { parentRunId: run.id } });
    const launched = await launchFixRun({ db: db(), intentId: intent.id });
    if (launched.kind !== "launched") throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: launched.runId });
    await refusedThenApproved(w, approvalId, w.actor, /^You wrote the rejection this run carries/);
  });

  it("lets a cause reject, shows the refusal on the run page, and with the rule off lets them approve", async () => {
    const w = await world();
    const run = await createExecRun({ repositoryId: w.repo.repository.id, stack: w.repo.stack, sha: w.repo.sha, status: "suggested" });
    await callerFor(w.actor).runs.dispatch({ runId: run.id });
    const { approvalId } = await requestPatchApproval({ repo: w.repo, runId: run.id });
    const page = await callerFor(w.actor).runs.byId({ runId: run.id });
    expect(page.controls.approve).toMatchObject({ enabled: false, reason: expect.stringMatching(/^You dispatched this run/) });
    expect(page.controls.reject).toMatchObject({ enabled: true });
    expect((await callerFor(w.other).runs.byId({ runId: run.id })).controls.approve).toMatchObject({ enabled: true });

    await db().repository.update({ where: { id: w.repo.repository.id }, data: { twoPersonRule: false } });
    expect((await callerFor(w.actor).approvals.byId({ approvalId })).viewerTwoPersonRefusal).toBeNull();
    await expect(callerFor(w.actor).approvals.approve(await shown(approvalId))).resolves.toMatchObject({ approvalId });
  });
});
