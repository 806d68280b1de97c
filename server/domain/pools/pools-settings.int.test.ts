// Runner pools, service accounts and grants through their procedures: admins only, the trust
// rules kept by the domain (a privileged secret never reaches an untrusted pool; an untrusted pool
// never runs under a privileged account), stale edits, and which pools may receive each grant.
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { AppError } from "@/server/errors";
import { callHttp, makeStack, uid } from "@/server/testing/config-factories";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { createSecretGrant, updateSecretGrant } from "./grants";

const db = getDb();
let admin: SessionUser;
let maintainer: SessionUser;
let stackId = "";

beforeAll(async () => {
  [admin, maintainer] = await Promise.all([createUser({ isAdmin: true }), createUser()]);
  await createRepository({ members: [[maintainer, "maintainer"]] });
  stackId = (await makeStack(db, admin)).id;
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

const account = (privileged: boolean) =>
  callerFor(admin).pools.createServiceAccount({ name: `sa-${uid()}`, namespace: "airlock", privileged, description: "" });

const secret = (over: Partial<{ privileged: boolean; trustedPoolsOnly: boolean; taskKinds: ("diagnose" | "repair")[] }> = {}) => ({
  secretName: `TOKEN_${uid().toUpperCase()}`,
  stackId,
  privileged: false,
  trustedPoolsOnly: true,
  taskKinds: [] as ("diagnose" | "repair")[],
  ...over,
});

describe("runner pools and service accounts", () => {
  it("an admin creates and edits a pool; the change is audited", async () => {
    const [runtime, runner] = await Promise.all([account(true), account(false)]);
    const pool = await callerFor(admin).pools.createPool({
      name: `trusted-${uid()}`,
      trustTier: "trusted",
      kind: "local",
      concurrency: 2,
      allowedTaskKinds: ["diagnose"],
      runtimeServiceAccountId: runtime.id,
      runnerServiceAccountId: runner.id,
    });
    const { id, version, createdAt: _c, updatedAt: _u, ...values } = pool;
    const updated = await callerFor(admin).pools.updatePool({ ...values, concurrency: 6, id, expectedVersion: version });
    expect(updated).toMatchObject({ version: 2, concurrency: 6 });
    const audit = await db.auditEntry.findMany({ where: { objectId: id }, orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["runner_pool.create", "runner_pool.update"]);
    expect(audit[1]?.detail).toMatchObject({ changes: [{ path: "concurrency", before: "2", after: "6" }] });

    const stale = await refusal(callerFor(admin).pools.updatePool({ ...values, concurrency: 3, id, expectedVersion: 1 }));
    expect(stale.code).toBe("CONFLICT");
    expect(((stale.cause as AppError).details as { theirChange: { changes: unknown[] } }).theirChange.changes).toEqual([
      { path: "concurrency", kind: "changed", before: "2", after: "6" },
    ]);
    expect((await db.runnerPool.findUniqueOrThrow({ where: { id } })).concurrency).toBe(6);
  });

  it("refuses an untrusted pool under a privileged account, and making a sandbox account privileged", async () => {
    const [privileged, plain] = await Promise.all([account(true), account(false)]);
    const base = { name: `sandbox-${uid()}`, trustTier: "untrusted" as const, kind: "local" as const, concurrency: 1, allowedTaskKinds: [] };
    const err = await refusal(
      callerFor(admin).pools.createPool({ ...base, runtimeServiceAccountId: privileged.id, runnerServiceAccountId: plain.id }),
    );
    expect(err.code).toBe("UNPROCESSABLE_CONTENT");
    expect(err.message).toMatch(/is privileged, and an untrusted pool runs fork pull requests/);
    expect(Object.keys((err.cause as AppError).details?.fieldErrors as object)).toEqual(["runtimeServiceAccountId"]);

    await callerFor(admin).pools.createPool({ ...base, runtimeServiceAccountId: plain.id, runnerServiceAccountId: plain.id });
    const flip = await refusal(
      callerFor(admin).pools.updateServiceAccount({ id: plain.id, expectedVersion: 1, name: plain.name, namespace: plain.namespace, privileged: true, description: "" }),
    );
    expect(flip.message).toContain(base.name);
    expect((await db.serviceAccount.findUniqueOrThrow({ where: { id: plain.id } })).privileged).toBe(false);
  });

  it("lets only admins change pools; everyone signed in reads them, anonymous callers nothing", async () => {
    expect((await refusal(callerFor(null).pools.settings())).code).toBe("UNAUTHORIZED");
    const settings = await callerFor(maintainer).pools.settings();
    expect(settings.canEdit.allowed).toBe(false);
    const err = await refusal(callerFor(maintainer).pools.createServiceAccount({ name: `sa-${uid()}`, namespace: "airlock", privileged: false, description: "" }));
    expect(err.code).toBe("FORBIDDEN");
    expect((await refusal(callerFor(maintainer).pools.createSecretGrant(secret()))).code).toBe("FORBIDDEN");
  });
});

describe("secret and config grants", () => {
  it("refuses a privileged secret for untrusted pools with the reason, in the form's schema and in the domain", async () => {
    const http = await callHttp(admin, "pools.createSecretGrant", secret({ privileged: true, trustedPoolsOnly: false, taskKinds: ["repair"] }));
    expect(http.status).toBe(400);
    expect(http.error?.data.fieldErrors?.trustedPoolsOnly?.[0]).toMatch(/privileged secret can never be granted to untrusted pools: they run fork pull requests/);

    // Straight to the domain function, past any form or router.
    const direct = await createSecretGrant({ db, actor: admin, input: secret({ privileged: true, trustedPoolsOnly: false, taskKinds: ["repair"] }) }).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(AppError);
    expect((direct as AppError).code).toBe("UNPROCESSABLE");
    expect((direct as AppError).message).toMatch(/untrusted pools: they run fork pull requests and unverified refs/);
    expect(await db.secretGrant.count({ where: { privileged: true, trustedPoolsOnly: false } })).toBe(0);

    // Nor may an existing grant be widened to untrusted pools.
    const grant = await callerFor(admin).pools.createSecretGrant(secret({ privileged: true, taskKinds: ["repair"] }));
    const widened = await updateSecretGrant({
      db,
      actor: admin,
      input: { id: grant.id, expectedVersion: 1, secretName: grant.secretName, stackId, privileged: true, trustedPoolsOnly: false, taskKinds: ["repair"] },
    }).catch((e: unknown) => e);
    expect((widened as AppError).reason).toBe("privileged_secret_untrusted");
    expect(await db.secretGrant.findUniqueOrThrow({ where: { id: grant.id } })).toMatchObject({ trustedPoolsOnly: true, version: 1 });

    const unscoped = await refusal(callerFor(admin).pools.createSecretGrant(secret({ privileged: true })));
    expect(unscoped.message).toMatch(/must name the task kinds/);
  });

  it("says which pools and task kinds may receive each grant, and never holds a value", async () => {
    const [priv, plain] = await Promise.all([account(true), account(false)]);
    const trusted = await callerFor(admin).pools.createPool({ name: `t-${uid()}`, trustTier: "trusted", kind: "local", concurrency: 1, allowedTaskKinds: ["diagnose", "repair"], runtimeServiceAccountId: priv.id, runnerServiceAccountId: plain.id });
    const untrusted = await callerFor(admin).pools.createPool({ name: `u-${uid()}`, trustTier: "untrusted", kind: "local", concurrency: 1, allowedTaskKinds: ["diagnose"], runtimeServiceAccountId: plain.id, runnerServiceAccountId: plain.id });
    const privileged = await callerFor(admin).pools.createSecretGrant(secret({ privileged: true, taskKinds: ["repair"] }));
    const open = await callerFor(admin).pools.createSecretGrant(secret({ trustedPoolsOnly: false }));
    const config = await callerFor(admin).pools.createConfigGrant({ configMapName: `cm-${uid()}`, stackId: "", trustedPoolsOnly: false, taskKinds: ["diagnose"] });
    expect(config.stackId).toBeNull();

    const settings = await callerFor(maintainer).pools.settings();
    const receivers = (id: string) =>
      [...settings.secretGrants, ...settings.configGrants].find((g) => g.id === id)!.receivers.filter((r) => [trusted.id, untrusted.id].includes(r.poolId));
    expect(receivers(privileged.id)).toEqual([{ poolId: trusted.id, pool: trusted.name, trustTier: "trusted", taskKinds: ["repair"] }]);
    expect(receivers(open.id).map((r) => [r.pool, r.taskKinds])).toEqual([
      [trusted.name, ["diagnose", "repair"]],
      [untrusted.name, ["diagnose"]],
    ]);
    expect(receivers(config.id).map((r) => r.pool).sort()).toEqual([trusted.name, untrusted.name].sort());
    expect(Object.keys(settings.secretGrants[0]!).some((k) => /value/i.test(k))).toBe(false);

    await callerFor(admin).pools.deleteGrant({ kind: "secret", id: open.id, expectedVersion: 1 });
    expect(await db.secretGrant.count({ where: { id: open.id } })).toBe(0);
    const actions = (await db.auditEntry.findMany({ where: { objectId: open.id }, orderBy: { createdAt: "asc" } })).map((a) => a.action);
    expect(actions).toEqual(["secret_grant.create", "secret_grant.delete"]);
  });
});
