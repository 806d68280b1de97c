// Repository settings through their procedures: the policy form (admins only, audited per change
// and per write-back exception, stale edits refused), and members (the last admin stays).
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import type { AppError } from "@/server/errors";
import { callHttp } from "@/server/testing/config-factories";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

const db = getDb();
let admin: SessionUser;
let repoAdmin: SessionUser;
let coAdmin: SessionUser;
let maintainer: SessionUser;
let viewer: SessionUser;

beforeAll(async () => {
  [admin, repoAdmin, coAdmin, maintainer, viewer] = await Promise.all([createUser({ isAdmin: true }), createUser(), createUser(), createUser(), createUser()]);
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

const newRepo = () => createRepository({ members: [[repoAdmin, "admin"], [maintainer, "maintainer"], [viewer, "viewer"]] });

describe("repository policy", () => {
  it("a repository admin changes the policy; each write-back exception is audited on its own", async () => {
    const repo = await newRepo();
    const settings = await callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.canEdit.allowed).toBe(true);
    const saved = await callerFor(repoAdmin).repositorySettings.updatePolicy({
      ...settings.policy,
      autoRunOnFailedCheck: true,
      writeBackExceptions: ["comment", "rerun_workflow"],
      dispatchLabel: "agent:fix",
      repositoryId: repo.id,
      expectedVersion: settings.version,
    });
    expect(saved).toMatchObject({ version: 2, autoRunOnFailedCheck: true, writeBackExceptions: ["comment", "rerun_workflow"], dispatchLabel: "agent:fix" });
    const audit = await db.auditEntry.findMany({ where: { objectType: "Repository", objectId: repo.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    expect(audit.map((a) => a.action).sort()).toEqual([
      "repository.settings.update",
      "repository.write_back_exception.grant",
      "repository.write_back_exception.grant",
    ]);
    expect(audit.filter((a) => a.action.endsWith(".grant")).map((a) => (a.detail as { kind: string }).kind).sort()).toEqual(["comment", "rerun_workflow"]);

    const next = await callerFor(repoAdmin).repositorySettings.updatePolicy({ ...saved, writeBackExceptions: ["rerun_workflow"], repositoryId: repo.id, expectedVersion: 2 });
    expect(next.version).toBe(3);
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.write_back_exception.revoke" } })).toBe(1);
  });

  it("refuses a maintainer, a viewer and anonymous callers; the form shows why", async () => {
    const repo = await newRepo();
    const settings = await callerFor(maintainer).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.canEdit).toEqual({ allowed: false, reason: "Only a repository admin can change these settings; you are maintainer." });
    const input = { ...settings.policy, botCommentsAllowed: true, repositoryId: repo.id, expectedVersion: 1 };
    expect((await refusal(callerFor(maintainer).repositorySettings.updatePolicy(input))).code).toBe("FORBIDDEN");
    expect((await refusal(callerFor(viewer).repositorySettings.updatePolicy(input))).code).toBe("FORBIDDEN");
    expect((await refusal(callerFor(null).repositorySettings.updatePolicy(input))).code).toBe("UNAUTHORIZED");
    expect((await callerFor(admin).repositorySettings.updatePolicy(input)).botCommentsAllowed).toBe(true);
  });

  it("answers bad values with field errors", async () => {
    const repo = await newRepo();
    const settings = await callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id });
    const res = await callHttp(repoAdmin, "repositorySettings.updatePolicy", {
      ...settings.policy,
      botHandle: "agent",
      maxFixAttempts: 50,
      repositoryId: repo.id,
      expectedVersion: 1,
    });
    expect(res.status).toBe(400);
    expect(res.error?.data.fieldErrors?.botHandle?.[0]).toMatch(/@handle/);
    expect(res.error?.data.fieldErrors?.maxFixAttempts?.[0]).toBe("At most 10");
  });

  it("changes the fix-forward labels and bound: validated, audited, admins only", async () => {
    const repo = await newRepo();
    const settings = await callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.policy).toMatchObject({ agentReadyLabel: "ready-for-agent", humanReadyLabel: "ready-for-human", maxFixAttempts: 3 });
    const input = { ...settings.policy, agentReadyLabel: "  agent-ok ", humanReadyLabel: "needs human", maxFixAttempts: 2, repositoryId: repo.id, expectedVersion: 1 };

    // A maintainer may not change them, and nothing is written or audited.
    expect((await refusal(callerFor(maintainer).repositorySettings.updatePolicy(input))).code).toBe("FORBIDDEN");
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.settings.update" } })).toBe(0);

    // Bad names are field errors: a comma, an empty name, too long, the same label twice.
    const bad = async (over: Record<string, unknown>) =>
      (await callHttp(repoAdmin, "repositorySettings.updatePolicy", { ...input, ...over })).error?.data.fieldErrors as Record<string, string[]> | undefined;
    expect((await bad({ agentReadyLabel: "a,b" }))?.agentReadyLabel?.[0]).toBe("One label, without commas");
    expect((await bad({ humanReadyLabel: "   " }))?.humanReadyLabel?.[0]).toBe("Required");
    expect((await bad({ humanReadyLabel: "x".repeat(51) }))?.humanReadyLabel?.[0]).toBe("At most 50 characters");
    expect((await bad({ agentReadyLabel: "Same", humanReadyLabel: "same" }))?.humanReadyLabel?.[0]).toBe("Must differ from the ready-for-agent label");
    expect((await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).version).toBe(1);

    const saved = await callerFor(repoAdmin).repositorySettings.updatePolicy(input);
    expect(saved).toMatchObject({ version: 2, agentReadyLabel: "agent-ok", humanReadyLabel: "needs human", maxFixAttempts: 2 });
    const [entry, ...more] = await db.auditEntry.findMany({ where: { objectId: repo.id, action: "repository.settings.update" } });
    expect(more).toHaveLength(0);
    expect(entry?.actorUserId).toBe(repoAdmin.id);
    const changes = (entry?.detail as { changes: { path: string; before: string; after: string }[] }).changes;
    expect(changes.map((c) => [c.path, c.before, c.after]).sort()).toEqual([
      ["agentReadyLabel", "ready-for-agent", "agent-ok"],
      ["humanReadyLabel", "ready-for-human", "needs human"],
      ["maxFixAttempts", "3", "2"],
    ]);
    // The fix-loop view names the labels its escalation flips.
    expect((await callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id })).policy).toMatchObject({ agentReadyLabel: "agent-ok", humanReadyLabel: "needs human" });
  });

  it("refuses a save over a newer one with what changed, and keeps it", async () => {
    const repo = await newRepo();
    await db.membership.create({ data: { userId: coAdmin.id, repositoryId: repo.id, role: "admin" } });
    const loaded = await callerFor(repoAdmin).repositorySettings.get({ repositoryId: repo.id });
    await callerFor(coAdmin).repositorySettings.updatePolicy({ ...loaded.policy, maxFixAttempts: 5, repositoryId: repo.id, expectedVersion: 1 });
    const err = await refusal(callerFor(repoAdmin).repositorySettings.updatePolicy({ ...loaded.policy, twoPersonRule: false, repositoryId: repo.id, expectedVersion: 1 }));
    expect(err.code).toBe("CONFLICT");
    const details = (err.cause as AppError).details as { savedBy: string; theirChange: { changes: unknown[] } };
    expect(details.savedBy).toBe(coAdmin.email);
    expect(details.theirChange.changes).toEqual([{ path: "maxFixAttempts", kind: "changed", before: "3", after: "5" }]);
    expect(await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).toMatchObject({ version: 2, maxFixAttempts: 5, twoPersonRule: true });
  });
});

describe("members", () => {
  it("adds, re-roles and removes members, and never removes or demotes the last admin", async () => {
    const repo = await newRepo();
    const newcomer = await createUser();
    await callerFor(repoAdmin).repositorySettings.addMember({ repositoryId: repo.id, email: newcomer.email.toUpperCase(), role: "viewer" });
    const dup = await refusal(callerFor(repoAdmin).repositorySettings.addMember({ repositoryId: repo.id, email: newcomer.email, role: "viewer" }));
    expect(dup.code).toBe("CONFLICT");
    const unknown = await refusal(callerFor(repoAdmin).repositorySettings.addMember({ repositoryId: repo.id, email: "nobody@example.test", role: "viewer" }));
    expect(Object.keys((unknown.cause as AppError).details?.fieldErrors as object)).toEqual(["email"]);

    await callerFor(repoAdmin).repositorySettings.changeMemberRole({ repositoryId: repo.id, userId: newcomer.id, role: "maintainer", expectedRole: "viewer" });
    const stale = await refusal(
      callerFor(repoAdmin).repositorySettings.changeMemberRole({ repositoryId: repo.id, userId: newcomer.id, role: "admin", expectedRole: "viewer" }),
    );
    expect(stale.code).toBe("CONFLICT");
    expect(stale.message).toContain("is now maintainer");

    const last = await refusal(callerFor(repoAdmin).repositorySettings.removeMember({ repositoryId: repo.id, userId: repoAdmin.id, expectedRole: "admin" }));
    expect(last.code).toBe("CONFLICT");
    expect(last.message).toMatch(/last admin/);
    const demote = await refusal(
      callerFor(repoAdmin).repositorySettings.changeMemberRole({ repositoryId: repo.id, userId: repoAdmin.id, role: "viewer", expectedRole: "admin" }),
    );
    expect(demote.message).toMatch(/last admin/);

    // With a second admin, the first may step down.
    await callerFor(repoAdmin).repositorySettings.changeMemberRole({ repositoryId: repo.id, userId: newcomer.id, role: "admin", expectedRole: "maintainer" });
    await callerFor(repoAdmin).repositorySettings.removeMember({ repositoryId: repo.id, userId: repoAdmin.id, expectedRole: "admin" });
    const members = await callerFor(newcomer).repositorySettings.get({ repositoryId: repo.id });
    expect(members.members.map((m) => [m.email, m.role])).toEqual(
      expect.arrayContaining([
        [newcomer.email, "admin"],
        [maintainer.email, "maintainer"],
      ]),
    );
    expect(members.members.some((m) => m.id === repoAdmin.id)).toBe(false);
    const actions = (await db.auditEntry.findMany({ where: { repositoryId: repo.id, objectType: "Membership" }, orderBy: { createdAt: "asc" } })).map((a) => a.action);
    expect(actions).toEqual(["repository.member.add", "repository.member.role", "repository.member.role", "repository.member.remove"]);
  });

  it("refuses member changes by a maintainer", async () => {
    const repo = await newRepo();
    const err = await refusal(callerFor(maintainer).repositorySettings.removeMember({ repositoryId: repo.id, userId: viewer.id, expectedRole: "viewer" }));
    expect(err.code).toBe("FORBIDDEN");
  });
});
