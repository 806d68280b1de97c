// A disabled repository dispatches nothing a person asks for: dispatch, retry, resume, fork and
// the local CI's "Run check" are refused with the reason. Its admins disable (with a reason) and
// enable it; a maintainer or viewer cannot; a repository the GitHub App's installation disabled
// is enabled by the installation, not by hand.
import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { runLocalCheck } from "@/server/forges/local/local-ci";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";

const db = getDb();
let repoAdmin: SessionUser;
let maintainer: SessionUser;
let viewer: SessionUser;

beforeAll(async () => {
  [repoAdmin, maintainer, viewer] = await Promise.all([createUser(), createUser(), createUser()]);
});

async function refusal(p: Promise<unknown>): Promise<TRPCError & { cause?: { reason?: string } }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

async function localRepo() {
  const repo = await createRepository({ members: [[repoAdmin, "admin"], [maintainer, "maintainer"], [viewer, "viewer"]] });
  return db.repository.update({ where: { id: repo.id }, data: { forge: "local", checkCommand: "npm test" } });
}

describe("a disabled repository", () => {
  it("refuses dispatch, retry and Run check with the admin's reason, and lets them through once enabled", async () => {
    const repo = await localRepo();
    const suggested = await createRun({ repositoryId: repo.id, status: "suggested" });
    const failed = await createRun({ repositoryId: repo.id, status: "failed" });
    const disabled = await callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "moving to the new organisation" });
    expect(disabled).toMatchObject({ disabled: true, changed: true });
    expect(await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).toMatchObject({ disabledBy: "admin", disabledReason: "moving to the new organisation" });

    const dispatch = await refusal(callerFor(maintainer).runs.dispatch({ runId: suggested.id }));
    expect(dispatch.code).toBe("CONFLICT");
    expect(dispatch.message).toBe(`${repo.fullName} is disabled (by an admin: moving to the new organisation), so dispatching its runs is refused. A repository admin can enable it again on its settings page (Settings → Repositories).`);
    const retry = await refusal(callerFor(maintainer).runs.retry({ runId: failed.id }));
    expect(retry.message).toMatch(/is disabled .*, so a new attempt is refused/);
    const check = await refusal(callerFor(maintainer).repositorySettings.runCheck({ repositoryId: repo.id, requestId: randomUUID(), branch: "" }));
    expect(check.message).toMatch(/is disabled .*, so running its check is refused/);
    // The local CI itself refuses too (a job queued before the repository was disabled).
    await expect(runLocalCheck({ db, dataDir: await mkdtemp(join(tmpdir(), "airlock-disabled-")), repositoryId: repo.id, timeoutMs: 5_000 })).rejects.toMatchObject({ code: "CONFLICT", reason: "repository_disabled" });
    // The settings page says why before anyone clicks.
    const settings = await callerFor(maintainer).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.runCheck).toEqual({ allowed: false, reason: expect.stringContaining("is disabled") });
    // Nothing changed: still suggested, no attempt, no job.
    expect(await db.agentDispatchRun.findUniqueOrThrow({ where: { id: suggested.id } })).toMatchObject({ status: "suggested" });
    expect(await db.dispatchAttempt.count({ where: { runId: suggested.id } })).toBe(0);

    await callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: true });
    expect(await callerFor(maintainer).runs.dispatch({ runId: suggested.id })).toMatchObject({ status: "queued" });
    expect((await db.auditEntry.findMany({ where: { objectId: repo.id }, orderBy: { createdAt: "asc" } })).map((a) => a.action)).toEqual(["repository.disable", "repository.enable"]);
  });

  it("refuses a maintainer and a viewer, and a disable without a reason, changing nothing", async () => {
    const repo = await localRepo();
    for (const who of [maintainer, viewer]) {
      const err = await refusal(callerFor(who).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "no" }));
      expect(err.code).toBe("FORBIDDEN");
    }
    const noReason = await refusal(callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "   " }));
    expect(noReason.code).toBe("UNPROCESSABLE_CONTENT");
    const long = await refusal(callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "x".repeat(301) }));
    expect(long.code).toBe("BAD_REQUEST");
    expect(await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).toMatchObject({ disabledAt: null, version: 1 });
    expect(await db.auditEntry.count({ where: { objectId: repo.id } })).toBe(0);
    // Disabling twice (a double submit) changes it once.
    const twice = await Promise.all([1, 2].map(() => callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: false, reason: "paused" })));
    expect(twice.filter((r) => r.changed)).toHaveLength(1);
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.disable" } })).toBe(1);
  });

  it("leaves a repository the installation disabled to the installation", async () => {
    const repo = await localRepo();
    await db.repository.update({ where: { id: repo.id }, data: { forge: "github", disabledAt: new Date(), disabledBy: "installation", disabledReason: "removed from the GitHub App's installation on acme" } });
    const err = await refusal(callerFor(repoAdmin).repositorySettings.setEnabled({ repositoryId: repo.id, enabled: true }));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toMatch(/add it to the installation again on GitHub/);
    expect(await db.repository.findUniqueOrThrow({ where: { id: repo.id } })).toMatchObject({ disabledBy: "installation" });
  });
});
