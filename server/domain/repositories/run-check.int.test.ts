// "Run check" through the procedure: maintainers only, local-forge repositories with a check
// command only, and one queued ci.run job and audit entry per request id however often it is sent.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

const db = getDb();
let viewer: SessionUser;
let maintainer: SessionUser;

beforeAll(async () => {
  [viewer, maintainer] = await Promise.all([createUser(), createUser()]);
});

async function queuedChecks(repositoryId: string) {
  return db.$queryRaw<{ payload: { repositoryId: string; branch: string } }[]>`
    SELECT j."payload" FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
    WHERE t.identifier = 'ci.run' AND j."payload"->>'repositoryId' = ${repositoryId}`;
}

describe("repositorySettings.runCheck", () => {
  it("queues one local CI run of the default branch per request, audited, however often it is retried", async () => {
    const repo = await createRepository({ members: [[maintainer, "maintainer"]] });
    await db.repository.update({ where: { id: repo.id }, data: { forge: "local", checkCommand: "npm test" } });
    const input = { repositoryId: repo.id, requestId: randomUUID(), branch: "" };
    const results = await Promise.all([1, 2, 3].map(() => callerFor(maintainer).repositorySettings.runCheck(input)));
    expect(results.filter((r) => r.queued)).toHaveLength(1);
    expect(results.every((r) => r.branch === repo.defaultBranch)).toBe(true);
    expect(await queuedChecks(repo.id)).toEqual([{ payload: { repositoryId: repo.id, branch: repo.defaultBranch } }]);
    expect(await db.auditEntry.count({ where: { objectId: repo.id, action: "repository.run_check" } })).toBe(1);

    await callerFor(maintainer).repositorySettings.runCheck({ ...input, requestId: randomUUID() });
    expect(await queuedChecks(repo.id)).toHaveLength(2);
    const settings = await callerFor(maintainer).repositorySettings.get({ repositoryId: repo.id });
    expect(settings.runCheck).toEqual({ allowed: true, reason: null });
  });

  it("refuses viewers and repositories the local CI cannot check, queuing nothing", async () => {
    const repo = await createRepository({ members: [[viewer, "viewer"], [maintainer, "maintainer"]] });
    await db.repository.update({ where: { id: repo.id }, data: { forge: "local", checkCommand: null } });
    const denied = await callerFor(viewer).repositorySettings.runCheck({ repositoryId: repo.id, requestId: randomUUID(), branch: "" }).catch((e: unknown) => e);
    expect((denied as TRPCError).code).toBe("FORBIDDEN");
    const noCommand = await callerFor(maintainer).repositorySettings.runCheck({ repositoryId: repo.id, requestId: randomUUID(), branch: "" }).catch((e: unknown) => e);
    expect((noCommand as TRPCError).code).toBe("CONFLICT");
    expect((noCommand as TRPCError).message).toMatch(/has no check command/);
    expect((await callerFor(viewer).repositorySettings.get({ repositoryId: repo.id })).runCheck).toMatchObject({ allowed: false, reason: expect.stringMatching(/maintainer role/) });
    expect(await queuedChecks(repo.id)).toHaveLength(0);
  });
});
