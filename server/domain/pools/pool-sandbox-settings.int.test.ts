// A pool's sandbox settings through its procedures: defaults on create, every field named on
// edit, and the trust rules (an untrusted pool never gets open network or runs unsandboxed;
// no allowed host is Airlock's own database or web port).
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import { env } from "@/server/env";
import { uid } from "@/server/testing/config-factories";
import { callerFor, createUser } from "@/server/testing/factories";

const db = getDb();
let admin: SessionUser;
let accountId = "";

beforeAll(async () => {
  admin = await createUser({ isAdmin: true });
  accountId = (await callerFor(admin).pools.createServiceAccount({ name: `sa-${uid()}`, namespace: "airlock", privileged: false, description: "" })).id;
});

const base = (over: Record<string, unknown> = {}) => ({
  name: `p-${uid()}`,
  trustTier: "trusted" as "trusted" | "untrusted",
  kind: "local" as const,
  concurrency: 1,
  allowedTaskKinds: [],
  runtimeServiceAccountId: accountId,
  runnerServiceAccountId: accountId,
  ...over,
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

describe("a pool's sandbox settings", () => {
  it("a new pool gets restricted network, the default limits and never runs unsandboxed", async () => {
    const pool = await callerFor(admin).pools.createPool(base());
    expect(pool).toMatchObject({ networkMode: "restricted", allowedHosts: [], memoryLimitMb: 4096, processLimit: 512, cpuLimitSeconds: 3600, diskLimitMb: 10240, allowUnsandboxed: false });
  });

  it("an admin sets network, hosts and limits; the change is audited field by field", async () => {
    const pool = await callerFor(admin).pools.createPool(base());
    const { id, version, createdAt: _c, updatedAt: _u, ...values } = pool;
    const updated = await callerFor(admin).pools.updatePool({ ...values, networkMode: "none", allowedHosts: ["registry.npmjs.org"], memoryLimitMb: 2048, id, expectedVersion: version });
    expect(updated).toMatchObject({ networkMode: "none", allowedHosts: ["registry.npmjs.org"], memoryLimitMb: 2048, version: 2 });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { objectId: id, action: "runner_pool.update" } });
    expect((audit.detail as { changes: { path: string }[] }).changes.map((c) => c.path).sort()).toEqual(["allowedHosts", "memoryLimitMb", "networkMode"]);
  });

  it("an edit that leaves out the sandbox settings is refused, never a quiet reset to defaults", async () => {
    const pool = await callerFor(admin).pools.createPool(base({ networkMode: "none" }));
    const err = await refusal(callerFor(admin).pools.updatePool({ ...base({ name: pool.name }), id: pool.id, expectedVersion: pool.version } as never));
    expect(err.code).toBe("BAD_REQUEST");
    expect((await db.runnerPool.findUniqueOrThrow({ where: { id: pool.id } })).networkMode).toBe("none");
  });

  it("refuses open network and an unsandboxed fallback on an untrusted pool", async () => {
    const open = await refusal(callerFor(admin).pools.createPool(base({ trustTier: "untrusted", networkMode: "open" })));
    expect(open.code).toBe("BAD_REQUEST");
    expect(open.message).toContain("Open network is for trusted pools only");
    const unsandboxed = await refusal(callerFor(admin).pools.createPool(base({ trustTier: "untrusted", allowUnsandboxed: true })));
    expect(unsandboxed.message).toContain("never runs without a sandbox");
    // A trusted pool may, by an admin's choice.
    expect(await callerFor(admin).pools.createPool(base({ networkMode: "open", allowUnsandboxed: true }))).toMatchObject({ networkMode: "open", allowUnsandboxed: true });
  });

  it("refuses an allowed host that is Airlock's own database or web port on loopback, and a malformed host", async () => {
    const dbPort = new URL(env.DATABASE_URL ?? process.env.DATABASE_URL!).port;
    for (const host of [`127.0.0.1:${dbPort}`, `127.0.0.1:${env.PORT}`]) {
      const err = await refusal(callerFor(admin).pools.createPool(base({ allowedHosts: [host] })));
      expect(err.message).toContain("is Airlock's own database or web server");
    }
    expect((await refusal(callerFor(admin).pools.createPool(base({ allowedHosts: ["http://evil.example/"] })))).code).toBe("BAD_REQUEST");
    expect(await callerFor(admin).pools.createPool(base({ allowedHosts: ["127.0.0.1:4000", "*.npmjs.org:443"] }))).toMatchObject({ allowedHosts: ["127.0.0.1:4000", "*.npmjs.org:443"] });
  });

  it("only an admin changes them", async () => {
    const someone = await createUser();
    expect((await refusal(callerFor(someone).pools.createPool(base({ networkMode: "open" })))).code).toBe("FORBIDDEN");
  });
});
