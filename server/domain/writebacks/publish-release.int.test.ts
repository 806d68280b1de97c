import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { approveWriteBack } from "@/server/domain/run-engine/decide-approval";
import { zPresented } from "@/server/domain/approvals/schemas";
import { type FakeGithub, startFakeGithub } from "@/server/forges/github/testing/fake-github";
import { git } from "@/server/forges/local/git";
import { listLocalReleases } from "@/server/forges/local/publish-release";
import { writeBackMarker } from "@/server/forges/types";
import { contentDigest } from "@/server/lib/digest";
import { createExecRun, createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { runReactions } from "@/server/queue/testing/reactions";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { localForgeFor } from "@/server/domain/approvals/test-fixtures";
import { executeWriteBack } from "./execute";
import { forgeResolver } from "./forges";
import { requestPublishRelease } from "./publish-release";

// publish_release end to end: always a person (whatever the repository and stack allow), the
// readiness report and the artifact's digest shown, the approved bytes published once (local: an
// annotated tag and a release record; GitHub: POST /releases and its asset), a changed artifact
// refused as stale.

const db = () => getDb();
const actorOf = (u: { id: string; email: string }) => ({ userId: u.id, label: u.email });
const approver = (u: { id: string; email: string }) => ({ id: u.id, email: u.email, isAdmin: false });

const report = "# Release readiness: v2.14.0\n\n- chart appVersion 2.14.0\n- notes: complete\n";
const bundle = "web-console-2.14.0.tgz sha256 0f3a...\n";

async function releaseRun(opts: { repositoryId: string; sha: string }) {
  const stack = await createStack(scriptedSpec({ approvalMode: "exceptions_allowed" }));
  const run = await createExecRun({ repositoryId: opts.repositoryId, stack, sha: opts.sha, taskKind: "release_review" });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "awaiting_approval", origin: "repository", contextBundle: { repository: { id: opts.repositoryId }, ref: { branch: "main", sha: opts.sha, tag: "v2.14.0" } } } });
  const make = (kind: "report" | "log", name: string, content: string) =>
    db().artifact.create({ data: { runId: run.id, kind, name, content, mediaType: kind === "report" ? "text/markdown" : "text/plain", digest: contentDigest(content), sizeBytes: Buffer.byteLength(content) } });
  const reportArtifact = await make("report", "readiness.md", report);
  const artifact = await make("log", "checksums.txt", bundle);
  return { run, reportArtifact, artifact };
}

async function localRelease() {
  const m = await createUser();
  const v = await createUser();
  const local = await createLocalRepository({ files: { "package.json": '{"version":"2.14.0"}\n' }, members: [[m, "maintainer"], [v, "viewer"]] });
  // Every exemption a repository can set: none reaches a release.
  await db().repository.update({ where: { id: local.repository.id }, data: { writeBackExceptions: ["push_commits", "open_pr", "comment", "rerun_workflow"], botCommentsAllowed: true } });
  const r = await releaseRun({ repositoryId: local.repository.id, sha: local.sha });
  return { m, v, ...local, ...r };
}

async function approvedLocalRelease() {
  const g = await localRelease();
  const asked = await requestPublishRelease({ db: db(), runId: g.run.id, by: actorOf(g.m), input: { artifactId: g.artifact.id } });
  if (asked.kind !== "approval") throw new Error("expected an approval");
  await approveWriteBack({ db: db(), actor: approver(g.m), approvalId: asked.approvalId, artifactDigest: g.artifact.digest, headSha: g.sha });
  return { ...g, approvalId: asked.approvalId, release: asked.release };
}

const tagsOf = async (repoPath: string) => (await git(["--git-dir", repoPath, "tag", "--list"])).trim().split("\n").filter(Boolean);

describe("publish_release on the local forge", () => {
  it("always waits for a person, shows the report and digest, and publishes the approved bytes as an annotated tag and a release record", async () => {
    const { repoPath, dataDir, repository, run, artifact, reportArtifact, approvalId, release, sha } = await approvedLocalRelease();
    const approval = await db().approvalRequest.findUniqueOrThrow({ where: { id: approvalId }, include: { policyDecision: true } });
    expect(approval.policyDecision?.ruleName).toBe("release_publish_needs_a_person");
    expect(approval.targetBranch).toBe("v2.14.0");
    const presented = zPresented.parse(approval.presented);
    expect(presented.release).toMatchObject({ tag: "v2.14.0", commitSha: sha, artifact: { id: artifact.id, digest: artifact.digest }, report: { id: reportArtifact.id, digest: reportArtifact.digest, content: report } });
    expect(release.notes).toContain(artifact.digest);

    const res = await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId });
    expect(res).toMatchObject({ outcome: "succeeded", externalRef: "release v2.14.0", reconciled: false });
    expect((await git(["--git-dir", repoPath, "cat-file", "-t", "refs/tags/v2.14.0"])).trim()).toBe("tag");
    expect((await git(["--git-dir", repoPath, "rev-parse", "v2.14.0^{commit}"])).trim()).toBe(sha);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId } });
    expect(await git(["--git-dir", repoPath, "cat-file", "tag", "refs/tags/v2.14.0"])).toContain(`Airlock-Write-Back: ${wb.idempotencyKey}`);
    const releases = await listLocalReleases(dataDir, repository.fullName);
    expect(releases).toHaveLength(1);
    expect(releases[0]).toMatchObject({ tag: "v2.14.0", commitSha: sha, notes: `${release.notes}\n\n${writeBackMarker(wb.idempotencyKey)}`, artifact: { name: "checksums.txt", digest: artifact.digest, sizeBytes: Buffer.byteLength(bundle) } });
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(releases[0]?.artifact.path as string, "utf8")).toBe(bundle);
    expect(wb).toMatchObject({ kind: "publish_release", outcome: "succeeded", artifactDigest: artifact.digest, stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash });
    // The report's text is shown, not copied into the write-back record.
    expect(JSON.stringify(wb.target)).not.toContain("chart appVersion");
    await runReactions();
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("succeeded");
  });

  it("a worker killed between the forge call and the record: the retry reconciles, one tag and one release", async () => {
    const { repoPath, dataDir, repository, approvalId } = await approvedLocalRelease();
    const crash = executeWriteBack({
      db: db(),
      forgeFor: localForgeFor(dataDir),
      approvalId,
      afterForgeCall: () => {
        throw new Error("worker killed");
      },
    });
    await expect(crash).rejects.toThrow("worker killed");
    const tagObject = (await git(["--git-dir", repoPath, "rev-parse", "refs/tags/v2.14.0"])).trim();
    expect(await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId })).toMatchObject({ outcome: "succeeded", reconciled: true });
    expect((await git(["--git-dir", repoPath, "rev-parse", "refs/tags/v2.14.0"])).trim()).toBe(tagObject);
    expect(await tagsOf(repoPath)).toEqual(["v2.14.0"]);
    expect(await listLocalReleases(dataDir, repository.fullName)).toHaveLength(1);
  });

  it("an artifact changed after the approval is stale at execution: nothing is tagged or published", async () => {
    const { repoPath, dataDir, repository, artifact, approvalId } = await approvedLocalRelease();
    await db().artifact.update({ where: { id: artifact.id }, data: { content: `${bundle}tampered\n` } });
    const res = await executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId });
    expect(res.outcome).toBe("failed");
    expect((await db().writeBack.findUniqueOrThrow({ where: { approvalId } })).error).toMatch(/^Stale: the artifact checksums\.txt changed since it was approved/);
    expect(await tagsOf(repoPath)).toEqual([]);
    expect(await listLocalReleases(dataDir, repository.fullName)).toHaveLength(0);
  });

  it("an artifact changed before the approval is refused as stale, not swapped in", async () => {
    const { m, sha, run, artifact } = await localRelease();
    const asked = await requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m), input: { artifactId: artifact.id } });
    if (asked.kind !== "approval") throw new Error("expected an approval");
    const changed = `${bundle}v2\n`;
    await db().artifact.update({ where: { id: artifact.id }, data: { content: changed, digest: contentDigest(changed) } });
    await expect(approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: sha })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: asked.approvalId } })).status).toBe("expired");
    expect(await db().approvalRequest.count({ where: { runId: run.id } })).toBe(1);
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(0);
  });

  it("a viewer cannot ask, a signed-out agent cannot approve, and a replayed approve writes once", async () => {
    const { m, v, sha, dataDir, repoPath, run, artifact } = await localRelease();
    await expect(callerFor(v).writeBacks.requestPublishRelease({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const asked = await callerFor(m).writeBacks.requestPublishRelease({ runId: run.id, artifactId: artifact.id, tag: "v2.14.0" });
    expect(asked.kind).toBe("approval");
    if (asked.kind !== "approval") return;
    await expect(approveWriteBack({ db: db(), actor: null, approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: sha })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(callerFor(v).approvals.approve({ approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: sha })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: sha });
    await expect(approveWriteBack({ db: db(), actor: approver(m), approvalId: asked.approvalId, artifactDigest: artifact.digest, headSha: sha })).rejects.toMatchObject({ code: "CONFLICT" });
    const results = await Promise.all([0, 1].map(() => executeWriteBack({ db: db(), forgeFor: localForgeFor(dataDir), approvalId: asked.approvalId })));
    expect(results.filter((r) => r.outcome === "succeeded")).toHaveLength(1);
    expect(await tagsOf(repoPath)).toEqual(["v2.14.0"]);
    expect(await db().writeBack.count({ where: { runId: run.id } })).toBe(1);
    await expect(callerFor(m).writeBacks.requestPublishRelease({ runId: run.id })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("refuses a tag git could read as an option, a patch as the artifact, and a run without a readiness report", async () => {
    const { m, run } = await localRelease();
    await expect(requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m), input: { tag: "--force" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m), input: { tag: "v1/../../x" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const patch = await db().artifact.create({ data: { runId: run.id, kind: "patch", name: "p.diff", content: "x", digest: contentDigest("x"), sizeBytes: 1 } });
    await expect(requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m), input: { artifactId: patch.id } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await db().artifact.deleteMany({ where: { runId: run.id, kind: "report" } });
    await expect(requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m) })).rejects.toThrow("A release is published with its readiness report, and this run produced none.");
  });
});

describe("publish_release on GitHub (the test double over HTTP)", () => {
  let gh: FakeGithub;
  beforeAll(async () => {
    gh = await startFakeGithub();
  });
  afterAll(() => gh.close());
  const forgeFor = () => forgeResolver(db(), { dataDir: "/nonexistent", ciTimeoutMs: 60_000, githubToken: gh.token, githubApiUrl: gh.url });

  it("POSTs /releases and uploads the approved bytes once, even when the worker dies between the forge call and the record", async () => {
    const m = await createUser();
    const repository = await createRepository({ members: [[m, "maintainer"]] });
    await db().repository.update({ where: { id: repository.id }, data: { forge: "github" } });
    const { headSha } = gh.createRepository(repository.fullName, { branch: "main", files: { "package.json": "{}\n" } });
    const { run, artifact } = await releaseRun({ repositoryId: repository.id, sha: headSha });
    const asked = await requestPublishRelease({ db: db(), runId: run.id, by: actorOf(m), input: { artifactId: artifact.id } });
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
    expect(again).toMatchObject({ outcome: "succeeded", reconciled: true, externalRef: "release v2.14.0" });
    const releases = gh.repo(repository.fullName).releases;
    expect(releases).toHaveLength(1);
    const wb = await db().writeBack.findUniqueOrThrow({ where: { approvalId: asked.approvalId } });
    expect(releases[0]).toMatchObject({ tagName: "v2.14.0", targetCommitish: headSha, body: `${asked.release.notes}\n\n${writeBackMarker(wb.idempotencyKey)}` });
    expect(releases[0]?.assets.map((a) => [a.name, a.content.toString("utf8")])).toEqual([["checksums.txt", bundle]]);
    expect(gh.repo(repository.fullName).tags.get("v2.14.0")).toBe(headSha);
    expect(gh.requests.filter((r) => r.method === "POST" && r.path.endsWith("/releases"))).toHaveLength(1);
  });
});
