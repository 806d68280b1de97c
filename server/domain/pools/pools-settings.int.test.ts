// Runner pools, service accounts and grants through their procedures: admins only, the trust
// rules kept by the domain (a privileged secret never reaches an untrusted pool; an untrusted pool
// never runs under a privileged account), stale edits, and which pools may receive each grant.
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { AppError } from "@/server/errors";
import { env } from "@/server/env";
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

describe("grants scoped to named runner pools", () => {
  async function pools() {
    const [priv, plain] = await Promise.all([account(true), account(false)]);
    const base = { kind: "local" as const, concurrency: 1, allowedTaskKinds: [], runnerServiceAccountId: plain.id };
    const [trustedA, trustedB, untrusted] = await Promise.all([
      callerFor(admin).pools.createPool({ ...base, name: `ta-${uid()}`, trustTier: "trusted", runtimeServiceAccountId: priv.id }),
      callerFor(admin).pools.createPool({ ...base, name: `tb-${uid()}`, trustTier: "trusted", runtimeServiceAccountId: plain.id }),
      callerFor(admin).pools.createPool({ ...base, name: `u-${uid()}`, trustTier: "untrusted", runtimeServiceAccountId: plain.id }),
    ]);
    return { trustedA, trustedB, untrusted };
  }

  it("a grant named to one pool reaches only that pool; existing tier grants keep reaching every allowed pool", async () => {
    const { trustedA, trustedB, untrusted } = await pools();
    const named = await callerFor(admin).pools.createSecretGrant({ ...secret({ privileged: true, taskKinds: ["repair"] }), poolScope: "named_pools", poolIds: [trustedA.id] });
    expect(named).toMatchObject({ poolScope: "named_pools", poolIds: [trustedA.id] });
    // Before named pools, callers sent no scope: still a trust-tier grant.
    const tier = await callerFor(admin).pools.createSecretGrant(secret({ trustedPoolsOnly: false }));
    expect(tier).toMatchObject({ poolScope: "trust_tier", poolIds: [] });
    const config = await callerFor(admin).pools.createConfigGrant({ configMapName: `cm-${uid()}`, stackId: "", trustedPoolsOnly: false, poolScope: "named_pools", poolIds: [untrusted.id], taskKinds: [] });

    const settings = await callerFor(maintainer).pools.settings();
    const reached = (id: string) =>
      [...settings.secretGrants, ...settings.configGrants]
        .find((g) => g.id === id)!
        .receivers.map((r) => r.poolId)
        .filter((p) => [trustedA.id, trustedB.id, untrusted.id].includes(p))
        .sort();
    expect(reached(named.id)).toEqual([trustedA.id]);
    expect(reached(tier.id)).toEqual([trustedA.id, trustedB.id, untrusted.id].sort());
    expect(reached(config.id)).toEqual([untrusted.id]);
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: named.id } });
    expect(JSON.stringify(audit.detail)).toContain("named_pools");
  });

  it("refuses a privileged secret named to an untrusted pool, in the form's schema and in the domain", async () => {
    const { trustedA, untrusted } = await pools();
    const input = { ...secret({ privileged: true, taskKinds: ["repair"] }), poolScope: "named_pools" as const, poolIds: [trustedA.id, untrusted.id] };
    const http = await callHttp(admin, "pools.createSecretGrant", input);
    expect(http.status).toBe(422);
    expect((http.error?.data.details?.fieldErrors as Record<string, string[]> | undefined)?.poolIds?.[0]).toMatch(new RegExp(`privileged secret can never be granted to an untrusted pool \\(${untrusted.name}\\)`));
    const direct = (await createSecretGrant({ db, actor: admin, input }).catch((e: unknown) => e)) as AppError;
    expect(direct.reason).toBe("privileged_secret_untrusted");
    expect(await db.secretGrant.count({ where: { secretName: input.secretName } })).toBe(0);

    // Nor can an existing named grant be widened onto the untrusted pool.
    const grant = await callerFor(admin).pools.createSecretGrant({ ...input, poolIds: [trustedA.id] });
    const widened = (await updateSecretGrant({ db, actor: admin, input: { ...input, id: grant.id, expectedVersion: 1 } }).catch((e: unknown) => e)) as AppError;
    expect(widened.reason).toBe("privileged_secret_untrusted");
    expect(await db.secretGrant.findUniqueOrThrow({ where: { id: grant.id } })).toMatchObject({ poolIds: [trustedA.id], version: 1 });

    const empty = await refusal(callerFor(admin).pools.createSecretGrant({ ...input, poolIds: [] }));
    expect(empty.message).toMatch(/Name at least one pool/);
    const ghost = await refusal(callerFor(admin).pools.createConfigGrant({ configMapName: `cm-${uid()}`, stackId: "", trustedPoolsOnly: false, poolScope: "named_pools", poolIds: ["no-such-pool"], taskKinds: [] }));
    expect(ghost.message).toMatch(/no longer exists/);
  });

  it("a pool a trusted-only grant names cannot become untrusted, and a named pool cannot be deleted", async () => {
    const { trustedB } = await pools();
    await callerFor(admin).pools.createSecretGrant({ ...secret({ privileged: true, taskKinds: ["repair"] }), poolScope: "named_pools", poolIds: [trustedB.id] });
    const { id, version, createdAt: _c, updatedAt: _u, ...values } = trustedB;
    const demoted = await refusal(callerFor(admin).pools.updatePool({ ...values, trustTier: "untrusted", id, expectedVersion: version }));
    expect(demoted.message).toMatch(/named by grants for trusted pools only/);
    expect(await db.runnerPool.findUniqueOrThrow({ where: { id } })).toMatchObject({ trustTier: "trusted", version: 1 });
    const deleted = await refusal(callerFor(admin).pools.deletePool({ id, expectedVersion: version }));
    expect(deleted.message).toMatch(/Grants name/);
    expect(await db.runnerPool.count({ where: { id } })).toBe(1);
  });

  it("two admins racing (demote the pool, name it in a privileged grant) never leave a privileged grant on an untrusted pool", async () => {
    const { trustedB } = await pools();
    const { id, version, createdAt: _c, updatedAt: _u, ...values } = trustedB;
    const results = await Promise.allSettled([
      callerFor(admin).pools.updatePool({ ...values, trustTier: "untrusted", id, expectedVersion: version }),
      callerFor(admin).pools.createSecretGrant({ ...secret({ privileged: true, taskKinds: ["repair"] }), poolScope: "named_pools", poolIds: [id] }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const pool = await db.runnerPool.findUniqueOrThrow({ where: { id } });
    const naming = await db.secretGrant.count({ where: { poolIds: { has: id }, privileged: true } });
    expect(pool.trustTier === "untrusted" && naming > 0).toBe(false);
  });
});

// A pool's sandbox settings: defaults on create, every field named on edit, and the trust rules
// (an untrusted pool never gets open network or runs unsandboxed; no allowed host is Airlock's
// own database or web port).
let sandboxAccountId = "";
beforeAll(async () => {
  sandboxAccountId = (await callerFor(admin).pools.createServiceAccount({ name: `sa-${uid()}`, namespace: "airlock", privileged: false, description: "" })).id;
});

const poolBase = (over: Record<string, unknown> = {}) => ({
  name: `p-${uid()}`,
  trustTier: "trusted" as "trusted" | "untrusted",
  kind: "local" as const,
  concurrency: 1,
  allowedTaskKinds: [],
  runtimeServiceAccountId: sandboxAccountId,
  runnerServiceAccountId: sandboxAccountId,
  ...over,
});

describe("a pool's sandbox settings", () => {
  it("a new pool gets restricted network, the default limits and never runs unsandboxed", async () => {
    const pool = await callerFor(admin).pools.createPool(poolBase());
    expect(pool).toMatchObject({ networkMode: "restricted", allowedHosts: [], memoryLimitMb: 4096, processLimit: 512, cpuLimitSeconds: 3600, diskLimitMb: 10240, allowUnsandboxed: false });
  });

  it("an admin sets network, hosts and limits; the change is audited field by field", async () => {
    const pool = await callerFor(admin).pools.createPool(poolBase());
    const { id, version, createdAt: _c, updatedAt: _u, ...values } = pool;
    const updated = await callerFor(admin).pools.updatePool({ ...values, networkMode: "none", allowedHosts: ["registry.npmjs.org"], memoryLimitMb: 2048, id, expectedVersion: version });
    expect(updated).toMatchObject({ networkMode: "none", allowedHosts: ["registry.npmjs.org"], memoryLimitMb: 2048, version: 2 });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: id, action: "runner_pool.update" } });
    expect((audit.detail as { changes: { path: string }[] }).changes.map((c) => c.path).sort()).toEqual(["allowedHosts", "memoryLimitMb", "networkMode"]);
  });

  it("an edit that leaves out the sandbox settings is refused, never a quiet reset to defaults", async () => {
    const pool = await callerFor(admin).pools.createPool(poolBase({ networkMode: "none" }));
    const err = await refusal(callerFor(admin).pools.updatePool({ ...poolBase({ name: pool.name }), id: pool.id, expectedVersion: pool.version } as never));
    expect(err.code).toBe("BAD_REQUEST");
    expect((await db.runnerPool.findUniqueOrThrow({ where: { id: pool.id } })).networkMode).toBe("none");
  });

  it("refuses open network and an unsandboxed fallback on an untrusted pool", async () => {
    const open = await refusal(callerFor(admin).pools.createPool(poolBase({ trustTier: "untrusted", networkMode: "open" })));
    expect(open.code).toBe("BAD_REQUEST");
    expect(open.message).toContain("Open network is for trusted pools only");
    const unsandboxed = await refusal(callerFor(admin).pools.createPool(poolBase({ trustTier: "untrusted", allowUnsandboxed: true })));
    expect(unsandboxed.message).toContain("never runs without a sandbox");
    // A trusted pool may, by an admin's choice.
    expect(await callerFor(admin).pools.createPool(poolBase({ networkMode: "open", allowUnsandboxed: true }))).toMatchObject({ networkMode: "open", allowUnsandboxed: true });
  });

  it("refuses an allowed host that is Airlock's own database or web port on loopback, and a malformed host", async () => {
    const dbPort = new URL(env.DATABASE_URL ?? process.env.DATABASE_URL!).port;
    for (const host of [`127.0.0.1:${dbPort}`, `127.0.0.1:${env.PORT}`]) {
      const err = await refusal(callerFor(admin).pools.createPool(poolBase({ allowedHosts: [host] })));
      expect(err.message).toContain("is Airlock's own database or web server");
    }
    expect((await refusal(callerFor(admin).pools.createPool(poolBase({ allowedHosts: ["http://evil.example/"] })))).code).toBe("BAD_REQUEST");
    expect(await callerFor(admin).pools.createPool(poolBase({ allowedHosts: ["127.0.0.1:4000", "*.npmjs.org:443"] }))).toMatchObject({ allowedHosts: ["127.0.0.1:4000", "*.npmjs.org:443"] });
  });

  it("only an admin changes them", async () => {
    const someone = await createUser();
    expect((await refusal(callerFor(someone).pools.createPool(poolBase({ networkMode: "open" })))).code).toBe("FORBIDDEN");
  });
});
