// "Add repository" three ways (a new local-forge repository with real git, a GitHub repository by
// URL or name, a repository of the GitHub App's installation against the GitHub API test double):
// Airlock admins only, bounded input, audited, one repository per request however often it is sent.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { startFakeGithub, type FakeGithub } from "@/server/forges/github/testing/fake-github";
import { git } from "@/server/forges/local/git";
import { bareRepoPath } from "@/server/forges/local/repositories";
import { callHttp, failedCheck, recordFailure, sha, uid } from "@/server/testing/config-factories";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { saveExistingApp } from "../github-app/app-service";
import { sealingKey } from "../github-app/key";
import { createLocalRepository, installationCandidates, registerFromInstallation, registerGithubRepository } from "./add-service";
import { zCreateLocalRepositoryInput, zRegisterGithubRepositoryInput, zUpdateRepositoryDetailsInput } from "./schemas";

const db = getDb();
const key = sealingKey();
let admin: SessionUser;
let repoAdmin: SessionUser;
let maintainer: SessionUser;
let viewer: SessionUser;
let dataDir: string;
let fake: FakeGithub;

beforeAll(async () => {
  [admin, repoAdmin, maintainer, viewer] = await Promise.all([createUser({ isAdmin: true }), createUser(), createUser(), createUser()]);
  await createRepository({ members: [[repoAdmin, "admin"], [maintainer, "maintainer"], [viewer, "viewer"]] });
  dataDir = await mkdtemp(join(tmpdir(), "airlock-add-"));
  fake = await startFakeGithub();
});
afterAll(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

describe("a new local-forge repository", () => {
  it("is a real bare git repository with a first commit on its default branch and the check command", async () => {
    const fullName = `team-${uid()}/service`;
    const requestId = randomUUID();
    const repo = await createLocalRepository({ db, actor: admin, dataDir, input: { requestId, fullName, defaultBranch: "trunk", checkCommand: "  npm test  ", visibility: "internal" } });
    expect(repo).toMatchObject({ fullName, forge: "local", created: true });
    const row = await db.repository.findUniqueOrThrow({ where: { id: repo.id } });
    expect(row).toMatchObject({ forge: "local", defaultBranch: "trunk", checkCommand: "npm test", visibility: "internal", cloneUrl: `file://${bareRepoPath(dataDir, fullName)}` });
    const path = bareRepoPath(dataDir, fullName);
    expect((await git(["--git-dir", path, "rev-parse", "--is-bare-repository"])).trim()).toBe("true");
    expect((await git(["--git-dir", path, "symbolic-ref", "HEAD"])).trim()).toBe("refs/heads/trunk");
    expect((await git(["--git-dir", path, "log", "--format=%s", "trunk"])).trim()).toBe("Initial commit");
    expect(await git(["--git-dir", path, "show", "trunk:README.md"])).toContain("npm test");
    const audit = await db.auditEntry.findMany({ where: { objectId: repo.id } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "repository.register", actorUserId: admin.id, repositoryId: repo.id });
    expect(audit[0]?.detail).toMatchObject({ forge: "local", requestId, initialCommit: expect.stringMatching(/^[0-9a-f]{40}$/) });
  });

  it("a double click (the same request twice, at once) creates one repository and one commit", async () => {
    const fullName = `team-${uid()}/twice`;
    const input = { requestId: randomUUID(), fullName };
    const [a, b] = await Promise.all([createLocalRepository({ db, actor: admin, dataDir, input }), createLocalRepository({ db, actor: admin, dataDir, input })]);
    expect(a.id).toBe(b.id);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(await db.repository.count({ where: { fullName } })).toBe(1);
    expect(await db.auditEntry.count({ where: { objectId: a.id } })).toBe(1);
    expect((await git(["--git-dir", bareRepoPath(dataDir, fullName), "rev-list", "--count", "main"])).trim()).toBe("1");
    // Another request for the taken name is refused on the name field, and touches no git data.
    const again = await callHttp(admin, "repositorySettings.createLocal", { requestId: randomUUID(), fullName: fullName.toUpperCase() });
    expect(again.error?.data.code).toBe("CONFLICT");
    expect((again.error?.data.details?.fieldErrors as Record<string, string[]> | undefined)?.fullName?.[0]).toContain("registered already");
  });

  it("parses what it parsed once the same again (the router validates, then the domain)", () => {
    for (const input of [{ requestId: randomUUID(), fullName: "a/b" }, { requestId: randomUUID(), fullName: "a/b", checkCommand: " npm test " }]) {
      const once = zCreateLocalRepositoryInput.parse(input);
      expect(zCreateLocalRepositoryInput.parse(once)).toEqual(once);
    }
    const once = zRegisterGithubRepositoryInput.parse({ fullName: "https://github.com/a/b.git" });
    expect(zRegisterGithubRepositoryInput.parse(once)).toEqual(once);
    const details = zUpdateRepositoryDetailsInput.parse({ repositoryId: "c".repeat(25), expectedVersion: 1, defaultBranch: "main", checkCommand: "", trustTier: "trusted", visibility: "private" });
    expect(zUpdateRepositoryDetailsInput.parse(details)).toEqual(details);
  });

  it("never adopts git data no repository names", async () => {
    const fullName = `team-${uid()}/stray`;
    await git(["init", "--quiet", "--bare", bareRepoPath(dataDir, fullName)]);
    await expect(createLocalRepository({ db, actor: admin, dataDir, input: { requestId: randomUUID(), fullName } })).rejects.toMatchObject({ code: "CONFLICT", reason: "git_data_exists" });
    expect(await db.repository.count({ where: { fullName } })).toBe(0);
  });

  it("refuses names that could leave the forge folder, and bad branches and commands", async () => {
    for (const fullName of ["../etc", "a/b/c", ".hidden/x", "x/..", "x/y.git", "x/-", `${"o".repeat(40)}/x`, "x/ y", "x"]) {
      const res = await callHttp(admin, "repositorySettings.createLocal", { requestId: randomUUID(), fullName });
      expect(res.error?.data.code, fullName).toBe("BAD_REQUEST");
    }
    for (const defaultBranch of ["-x", "a..b", "a b", "x.lock", "a/"]) {
      const res = await callHttp(admin, "repositorySettings.createLocal", { requestId: randomUUID(), fullName: `ok-${uid()}/x`, defaultBranch });
      expect(res.error?.data.code, defaultBranch).toBe("BAD_REQUEST");
    }
    const twoLines = await callHttp(admin, "repositorySettings.createLocal", { requestId: randomUUID(), fullName: `ok-${uid()}/x`, checkCommand: "true\nrm -rf /" });
    expect(twoLines.error?.data.code).toBe("BAD_REQUEST");
    const noRequest = await callHttp(admin, "repositorySettings.createLocal", { fullName: `ok-${uid()}/x` });
    expect(noRequest.error?.data.code).toBe("BAD_REQUEST");
  });

  it("refuses a repository admin, a maintainer, a viewer and anonymous callers", async () => {
    const input = { requestId: randomUUID(), fullName: `team-${uid()}/nope` };
    for (const user of [repoAdmin, maintainer, viewer]) {
      expect((await refusal(callerFor(user).repositorySettings.createLocal(input))).code).toBe("FORBIDDEN");
      expect((await refusal(callerFor(user).repositorySettings.register({ fullName: input.fullName }))).code).toBe("FORBIDDEN");
      expect((await refusal(callerFor(user).repositorySettings.installationCandidates())).code).toBe("FORBIDDEN");
      expect((await refusal(callerFor(user).repositorySettings.registerFromInstallation({ requestId: input.requestId, installationId: 1, fullName: input.fullName }))).code).toBe("FORBIDDEN");
    }
    expect((await refusal(callerFor(null).repositorySettings.createLocal(input))).code).toBe("UNAUTHORIZED");
    await expect(createLocalRepository({ db, actor: maintainer, dataDir, input })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await db.repository.count({ where: { fullName: input.fullName } })).toBe(0);
  });
});

describe("a GitHub repository by URL or name", () => {
  it("reads owner/name from a URL; the same request again answers with the same repository", async () => {
    const owner = `Acme${uid()}`;
    const requestId = randomUUID();
    const first = await callerFor(admin).repositorySettings.register({ requestId, fullName: `https://github.com/${owner}/Widgets.git` });
    expect(first).toMatchObject({ fullName: `${owner}/Widgets`, forge: "github", created: true });
    const second = await callerFor(admin).repositorySettings.register({ requestId, fullName: `git@github.com:${owner}/Widgets.git` });
    expect(second).toEqual({ ...first, created: false });
    expect(await db.auditEntry.count({ where: { objectId: first.id, action: "repository.register" } })).toBe(1);
    const other = await callHttp(admin, "repositorySettings.register", { requestId: randomUUID(), fullName: `${owner.toLowerCase()}/widgets` });
    expect(other.error?.data.code).toBe("CONFLICT");
    for (const fullName of ["https://github.com/acme", "acme/a/b", "-acme/x", "acme/..", "javascript:alert(1)"]) {
      expect((await callHttp(admin, "repositorySettings.register", { fullName })).error?.data.code, fullName).toBe("BAD_REQUEST");
    }
  });
});

describe("a repository of the GitHub App's installation", () => {
  it("says plainly that no app is configured", async () => {
    expect(await installationCandidates({ db, actor: admin, key, apiUrl: fake.url })).toEqual({ configured: false });
    await expect(registerFromInstallation({ db, actor: admin, key, githubUrl: "https://github.com", apiUrl: fake.url, input: { requestId: randomUUID(), installationId: 1, fullName: "acme/x" } })).rejects.toMatchObject({ reason: "no_app" });
  });

  it("lists the installation's repositories not yet registered and adds one as GitHub describes it", async () => {
    const app = fake.apps.createApp({ name: "Airlock", owner: "acme" });
    await saveExistingApp({ db, actor: admin, input: { appId: app.id, privateKey: app.pem, webhookSecret: app.webhookSecret }, key, apiUrl: fake.url });
    const owner = `org${uid()}`;
    const known = await createRepository({ fullName: `${owner}/known` });
    const installation = fake.apps.install({ appId: app.id, account: owner, repositories: [`${owner}/known`, `${owner}/api`, `${owner}/site`], publicRepositories: [`${owner}/site`], defaultBranches: { [`${owner}/api`]: "develop" } });
    const listed = await installationCandidates({ db, actor: admin, key, apiUrl: fake.url });
    if (!listed.configured) throw new Error("expected an app");
    const mine = listed.installations.find((i) => i.id === installation.id);
    expect(mine?.repositories.map((r) => [r.fullName, r.visibility, r.defaultBranch, r.registeredId])).toEqual([
      [`${owner}/known`, "private", "main", known.id],
      [`${owner}/api`, "private", "develop", null],
      [`${owner}/site`, "public", "main", null],
    ]);

    const requestId = randomUUID();
    const add = () => registerFromInstallation({ db, actor: admin, key, githubUrl: "https://github.com", apiUrl: fake.url, input: { requestId, installationId: installation.id, fullName: `${owner}/api` } });
    const [a, b] = await Promise.all([add(), add()]);
    expect(a.id).toBe(b.id);
    const row = await db.repository.findUniqueOrThrow({ where: { id: a.id } });
    expect(row).toMatchObject({ forge: "github", defaultBranch: "develop", visibility: "private", githubInstallationId: BigInt(installation.id) });
    const audit = await db.auditEntry.findMany({ where: { objectId: a.id } });
    expect(audit.map((e) => [e.action, e.actorUserId])).toEqual([["repository.register", admin.id]]);

    // What the browser sends is only a choice: a repository the installation does not cover, or
    // another installation's id, is refused.
    const other = fake.apps.install({ appId: app.id, account: `x${owner}`, repositories: [`x${owner}/other`] });
    await expect(registerFromInstallation({ db, actor: admin, key, githubUrl: "https://github.com", apiUrl: fake.url, input: { requestId: randomUUID(), installationId: other.id, fullName: `${owner}/site` } })).rejects.toMatchObject({ reason: "not_in_installation" });
    await expect(registerFromInstallation({ db, actor: admin, key, githubUrl: "https://github.com", apiUrl: fake.url, input: { requestId: randomUUID(), installationId: 999_999_999, fullName: `${owner}/site` } })).rejects.toMatchObject({ reason: "no_installation" });
    expect(await db.repository.count({ where: { fullName: `${owner}/site` } })).toBe(0);
  });
});

describe("the repositories list", () => {
  it("shows forge, visibility, trust tier, state, members and the last delivery; a stranger sees none of it", async () => {
    const repo = await registerGithubRepository({ db, actor: admin, githubUrl: "https://github.com", input: { fullName: `list${uid()}/app`, visibility: "public" } });
    const deliveryId = await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(repo.fullName), runId: "1" }));
    await db.membership.create({ data: { userId: viewer.id, repositoryId: repo.id, role: "viewer" } });
    const seen = (await callerFor(viewer).repositorySettings.list()).find((r) => r.id === repo.id);
    expect(seen).toMatchObject({ fullName: repo.fullName, forge: "github", visibility: "public", trustTier: "trusted", disabledAt: null, role: "viewer", _count: { memberships: 1 } });
    expect(seen?.lastDelivery).toMatchObject({ deliveryId });
    const stranger = await createUser();
    expect(await callerFor(stranger).repositorySettings.list()).toEqual([]);
  });
});
