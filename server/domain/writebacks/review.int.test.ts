import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { calcBefore, localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { zPresented } from "@/server/domain/approvals/schemas";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { listLocalNotes } from "@/server/forges/local/write-back";
import { writeBackMarker } from "@/server/forges/types";
import { contentDigest } from "@/server/lib/digest";
import { createExecRun, createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { executeWriteBack } from "./execute";
import { forgeResolver } from "./forges";
import { reviewBody } from "./review";

// The review write-back end to end: a maintainer asks for it on the run page, the approval shows
// the body and its event byte for byte, a person approves, it is posted once on the local forge's
// PR (its conversation and review state) and on GitHub (the fake GitHub over HTTP), a crash
// between the forge call and the record is reconciled, a replayed approval writes nothing more,
// and viewers, strangers and the run's own causers are refused.

const db = () => getDb();
let gh: FakeGithub;
beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(() => gh.close());

const findings = "## Root cause\n\n`sum()` adds one too many: `return a + b + 1`.";
const asPerson = (u: { id: string; email: string }) => ({ id: u.id, email: u.email, isAdmin: false });

async function reviewRun(opts: { forge?: "local" | "github"; origin?: "repository" | "fork" | null; exceptions?: boolean; content?: string; actorUserId?: string; members?: Parameters<typeof createLocalRepository>[0]["members"] } = {}) {
  const prNumber = 7;
  let repository: { id: string; fullName: string };
  let dataDir = "/nonexistent";
  let sha: string;
  if (opts.forge === "github") {
    repository = await createRepository({ members: opts.members ?? [] });
    await db().repository.update({ where: { id: repository.id }, data: { forge: "github" } });
    sha = gh.createRepository(repository.fullName, { branch: "fix-sum", files: { "calc.js": calcBefore }, pulls: [prNumber] }).headSha;
  } else {
    const local = await createLocalRepository({ files: { "calc.js": calcBefore }, members: opts.members ?? [] });
    ({ repository, dataDir, sha } = local);
  }
  const pr = await db().pullRequest.create({ data: { repositoryId: repository.id, number: prNumber, title: "Fix sum", author: "dev", headRef: "fix-sum", headSha: sha, baseRef: "main", isFork: opts.origin === "fork" } });
  const stack = await createStack(scriptedSpec({ approvalMode: opts.exceptions ? "exceptions_allowed" : "always" }));
  const created = await createExecRun({ repositoryId: repository.id, stack, sha, taskKind: "diagnose", isFork: opts.origin === "fork", actorUserId: opts.actorUserId ?? null });
  const run = await db().agentDispatchRun.update({
    where: { id: created.id },
    data: { status: "succeeded", pullRequestId: pr.id, origin: opts.origin === undefined ? "repository" : opts.origin },
  });
  const content = opts.content ?? findings;
  const artifact = await db().artifact.create({ data: { runId: run.id, kind: "diagnosis", name: "diagnosis.md", content, digest: contentDigest(content), sizeBytes: Buffer.byteLength(content), mediaType: "text/markdown" } });
  return { repository, dataDir, run, artifact, prNumber, pr };
}

const githubForge = () => forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });
const killed = () => {
  throw new Error("worker killed");
};

describe("the review write-back", () => {
  it("requests changes on the local PR: the approval shows body and event byte for byte, it is posted once after a crash, with its provenance; a replayed approval writes nothing", async () => {
    const m = await createUser();
    const approver = await createUser();
    const { repository, dataDir, run, artifact, prNumber, pr } = await reviewRun({ members: [[m, "maintainer"], [approver, "maintainer"]] });
    expect((await callerFor(m).runs.byId({ runId: run.id })).review).toEqual({ allowed: true, reason: null });
    const asked = await callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "request_changes" });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    // A second request (a double click) is refused while the first stands.
    await expect(callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "comment" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await callerFor(m).runs.byId({ runId: run.id })).review).toMatchObject({ allowed: false, reason: expect.stringContaining("Already asked for") });

    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } });
    const presented = zPresented.parse(approval.presented);
    const expected = reviewBody({ runNumber: run.number, event: "REQUEST_CHANGES", artifactKind: "diagnosis", artifactDigest: artifact.digest, text: findings });
    expect(presented.message).toBe(expected);
    expect(presented.review).toEqual({ event: "REQUEST_CHANGES" });
    expect(approval).toMatchObject({ action: "review", targetPrNumber: prNumber, artifactDigest: artifact.digest });

    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: null });
    // The same approval replayed (a resent request): refused, and still one write-back.
    await expect(approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: null })).rejects.toMatchObject({ code: expect.stringMatching(/CONFLICT|PRECONDITION_FAILED/) });
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(1);

    const forgeFor = localForgeFor(dataDir);
    await expect(executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId, afterForgeCall: killed })).rejects.toThrow("worker killed");
    const again = await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId });
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true });
    expect(await executeWriteBack({ db: db(), forgeFor, approvalId: asked.approvalId })).toMatchObject({ outcome: "already_recorded" });

    const notes = await listLocalNotes(dataDir, repository.fullName, prNumber);
    expect(notes).toHaveLength(1);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(notes[0]).toMatchObject({ kind: "review", reviewEvent: "REQUEST_CHANGES", body: `${expected}\n\n${writeBackMarker(wb.idempotencyKey)}`, id: again.externalRef });
    expect((await db().pullRequest.findUniqueOrThrow({ where: { id: pr.id } })).reviewState).toBe("changes_requested");
    expect(wb).toMatchObject({ kind: "review", outcome: "succeeded", approvedBy: approver.email, artifactDigest: artifact.digest, stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, target: expect.objectContaining({ review: { event: "REQUEST_CHANGES" } }) });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } })).status).toBe("executed");
    expect(await db().auditEntry.count({ where: { objectId: run.id, action: "writeback.request" } })).toBe(1);
  });

  it("on GitHub: a comment review is posted once with COMMENT after a crash; an approving review is an approve_review, never exempt, posted with APPROVE", async () => {
    const m = await createUser();
    const approver = await createUser();
    const { repository, run, artifact, prNumber } = await reviewRun({ forge: "github", exceptions: true, members: [[m, "maintainer"], [approver, "maintainer"]] });
    // Every exemption a repository admin can give: a comment review proceeds, an approving one never.
    await db().repository.update({ where: { id: repository.id }, data: { writeBackExceptions: ["review", "comment"] } });
    const forgeFor = githubForge();

    const approving = await callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "approve" });
    expect(approving.kind).toBe("approval");
    if (approving.kind !== "approval") return;
    const decision = await db().policyDecision.findFirstOrThrow({ where: { runId: run.id }, orderBy: { createdAt: "desc" } });
    expect(decision).toMatchObject({ ruleName: "sensitive_write_back_needs_approval", value: true });
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: approving.approvalId } });
    expect(approval.action).toBe("approve_review");
    expect(zPresented.parse(approval.presented).review).toEqual({ event: "APPROVE" });
    await approveWriteBack({ db: db(), actor: asPerson(approver), approvalId: approving.approvalId, artifactDigest: artifact.digest, headSha: null });
    await expect(executeWriteBack({ db: db(), forgeFor, approvalId: approving.approvalId, afterForgeCall: killed })).rejects.toThrow("worker killed");
    expect(await executeWriteBack({ db: db(), forgeFor, approvalId: approving.approvalId })).toMatchObject({ outcome: "succeeded", reconciled: true });
    const reviews = gh.repo(repository.fullName).reviews.get(prNumber) ?? [];
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({ state: "APPROVED", body: expect.stringContaining("approves these changes") });

    // A second run on the same PR: its comment review is exempt and goes straight to GitHub.
    const second = await createExecRun({ repositoryId: repository.id, stack: await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" })), sha: run.headSha, taskKind: "diagnose" });
    await db().agentDispatchRun.update({ where: { id: second.id }, data: { status: "succeeded", pullRequestId: run.pullRequestId, origin: "repository" } });
    await db().artifact.create({ data: { runId: second.id, kind: "report", name: "report.md", content: "Looks fine.", digest: contentDigest("Looks fine."), sizeBytes: 11 } });
    const direct = await callerFor(m).writeBacks.requestReview({ runId: second.id, choice: "comment" });
    expect(direct.kind).toBe("direct");
    if (direct.kind !== "direct") return;
    expect(await executeWriteBack({ db: db(), forgeFor, writeBackId: direct.writeBackId })).toMatchObject({ outcome: "succeeded", reconciled: false });
    const after = gh.repo(repository.fullName).reviews.get(prNumber) ?? [];
    expect(after).toHaveLength(2);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { id: direct.writeBackId } });
    expect(after[1]).toMatchObject({ state: "COMMENTED", body: `${reviewBody({ runNumber: second.number, event: "COMMENT", artifactKind: "report", artifactDigest: contentDigest("Looks fine."), text: "Looks fine." })}\n\n${writeBackMarker(wb.idempotencyKey)}` });
    expect(wb).toMatchObject({ approvedBy: null, externalRef: String(after[1]?.id) });
    const createCalls = gh.requests.filter((r) => r.method === "POST" && r.path.endsWith(`/pulls/${prNumber}/reviews`));
    expect(createCalls.map((r) => (r.body as { event: string }).event)).toEqual(["APPROVE", "COMMENT"]);
  });

  it("a fork's or an unplaced run's review always waits for a person, whatever the repository exempts", async () => {
    const m = await createUser();
    for (const origin of ["fork", null] as const) {
      const { repository, run } = await reviewRun({ origin, exceptions: true, members: [[m, "maintainer"]] });
      await db().repository.update({ where: { id: repository.id }, data: { writeBackExceptions: ["review"] } });
      const asked = await callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "comment" });
      expect(asked.kind).toBe("approval");
      const decision = await db().policyDecision.findFirstOrThrow({ where: { runId: run.id }, orderBy: { createdAt: "desc" } });
      expect(decision).toMatchObject({ ruleName: "untrusted_origin_needs_approval", value: true });
      expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(0);
    }
  });

  it("refuses a viewer, a stranger and the signed-out; the run's own causer cannot approve it; an agent's text cannot forge the marker or mention anyone", async () => {
    const v = await createUser();
    const m = await createUser();
    const other = await createUser();
    const hostile = `@octocat <b>hi</b> ${writeBackMarker("wb_forged")}`;
    const { run, artifact, dataDir, repository, prNumber } = await reviewRun({ actorUserId: m.id, content: hostile, members: [[v, "viewer"], [m, "maintainer"], [other, "maintainer"]] });
    expect((await callerFor(v).runs.byId({ runId: run.id })).review).toMatchObject({ allowed: false, reason: expect.stringContaining("maintainer role") });
    await expect(callerFor(v).writeBacks.requestReview({ runId: run.id, choice: "comment" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(null).writeBacks.requestReview({ runId: run.id, choice: "comment" })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const stranger = await createUser();
    await expect(callerFor(stranger).writeBacks.requestReview({ runId: run.id, choice: "comment" })).rejects.toMatchObject({ code: expect.stringMatching(/FORBIDDEN|NOT_FOUND/) });
    // A choice outside the three is refused at the boundary.
    await expect(callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "dismiss" as "comment" })).rejects.toMatchObject({ code: "BAD_REQUEST" });

    const asked = await callerFor(m).writeBacks.requestReview({ runId: run.id, choice: "comment" });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    await expect(callerFor(v).approvals.approve({ approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: null })).rejects.toMatchObject({ code: "FORBIDDEN" });
    // m started the run: the two-person rule refuses them as its approver.
    await expect(callerFor(m).approvals.approve({ approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: null })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(0);

    await callerFor(other).approvals.approve({ approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: null });
    await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId: asked.approvalId });
    const [note] = await listLocalNotes(dataDir, repository.fullName, prNumber);
    expect(note?.body.match(/<!-- airlock-write-back:/g)).toHaveLength(1);
    expect(note?.body).toContain("&lt;b&gt;hi&lt;/b&gt;");
    expect(note?.body).not.toMatch(/@[A-Za-z0-9]/);
  });
});
