import type { Db, RunnerPool, ServiceAccount } from "@/server/db";
import { env } from "@/server/env";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireAdmin } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { fieldError, isUniqueViolation, parseInput } from "../input";
import { refusableTransaction, type Refuse } from "../refusable";
import { changedFields, lockRows, staleVersionError } from "../versioned";
import {
  zRunnerPoolInput,
  zServiceAccountInput,
  zUpdateRunnerPoolInput,
  zUpdateServiceAccountInput,
} from "./forms/schemas";

// Runner pools and service accounts, changed by Airlock admins only. The trust rule the forms
// cannot break: an untrusted pool runs fork pull requests and unverified refs, so neither of its
// service accounts may be privileged (a pool save and an account save lock the accounts involved,
// so two admins cannot break it together). Each change commits with its audit entry.

const POOL_FIELDS = [
  "name",
  "trustTier",
  "kind",
  "concurrency",
  "allowedTaskKinds",
  "runtimeServiceAccountId",
  "runnerServiceAccountId",
  "networkMode",
  "allowedHosts",
  "memoryLimitMb",
  "processLimit",
  "cpuLimitSeconds",
  "diskLimitMb",
  "allowUnsandboxed",
] as const;
const ACCOUNT_FIELDS = ["name", "namespace", "privileged", "description"] as const;

const pick = <T extends object, K extends keyof T>(row: T, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, row[k]])) as Pick<T, K>;

const nameTaken = (what: string, name: string) =>
  fieldError("CONFLICT", "name", `A ${what} called ${name} already exists: choose another name.`, "name_taken");

async function withUniqueName<T>(what: string, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(what, name);
    throw err;
  }
}

type PoolValues = ReturnType<typeof zRunnerPoolInput.parse>;

/** Grants that name this pool: a pool they name may not be deleted or become untrusted under them. */
async function grantsNaming(db: Db, poolId: string) {
  const where = { poolScope: "named_pools" as const, poolIds: { has: poolId } };
  const [secrets, configs] = await Promise.all([
    db.secretGrant.findMany({ where, select: { secretName: true, privileged: true, trustedPoolsOnly: true } }),
    db.configGrant.findMany({ where, select: { configMapName: true, trustedPoolsOnly: true } }),
  ]);
  return [
    ...secrets.map((g) => ({ name: g.secretName, trustedOnly: g.privileged || g.trustedPoolsOnly, privileged: g.privileged })),
    ...configs.map((g) => ({ name: g.configMapName, trustedOnly: g.trustedPoolsOnly, privileged: false })),
  ];
}

/** Refuses making a pool untrusted while a privileged or trusted-only grant names it. */
async function checkNamingGrants(db: Db, poolName: string, poolId: string, values: PoolValues, refuse: Refuse) {
  if (values.trustTier !== "untrusted") return;
  const blocking = (await grantsNaming(db, poolId)).filter((g) => g.trustedOnly);
  if (blocking.length === 0) return;
  const names = blocking.map((g) => `${g.name}${g.privileged ? " (privileged)" : ""}`).join(", ");
  refuse(
    fieldError(
      "UNPROCESSABLE",
      "trustTier",
      `${poolName} is named by grants for trusted pools only (${names}): an untrusted pool runs fork pull requests and unverified refs. Remove ${poolName} from those grants first.`,
      "pool_named_by_trusted_grant",
    ),
  );
}

/** Refuses an untrusted pool that would run under a privileged account. */
async function checkPoolAccounts(db: Db, values: PoolValues, refuse: Refuse) {
  const ids = [...new Set([values.runtimeServiceAccountId, values.runnerServiceAccountId])];
  await lockRows(db, "ServiceAccount", ids);
  const accounts = await db.serviceAccount.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, privileged: true } });
  for (const field of ["runtimeServiceAccountId", "runnerServiceAccountId"] as const) {
    const account = accounts.find((a) => a.id === values[field]);
    if (!account) refuse(fieldError("UNPROCESSABLE", field, "No such service account.", "no_such_service_account"));
    else if (values.trustTier === "untrusted" && account.privileged) {
      refuse(
        fieldError(
          "UNPROCESSABLE",
          field,
          `${account.name} is privileged, and an untrusted pool runs fork pull requests and unverified refs: pick an unprivileged account.`,
          "privileged_account_on_untrusted_pool",
        ),
      );
    }
  }
}

/**
 * Refuses an allowed host that is Airlock's own database or web port on this machine's loopback:
 * the egress proxy lets a listed `ip:port` through, so that listing would open the server to an agent.
 */
function checkAllowedHosts(values: Pick<PoolValues, "allowedHosts">, refuse: Refuse) {
  const own = new Set([String(env.PORT), env.DATABASE_URL ? new URL(env.DATABASE_URL).port || "5432" : ""].filter(Boolean));
  for (const host of values.allowedHosts) {
    const m = /^(?:127\.\d+\.\d+\.\d+|\[::1\]|localhost|0\.0\.0\.0):(\d+)$/.exec(host);
    if (m && own.has(m[1]!)) {
      refuse(fieldError("UNPROCESSABLE", "allowedHosts", `${host} is Airlock's own database or web server: an agent may never reach it.`, "allowed_host_is_airlock"));
    }
  }
}

export async function createRunnerPool(opts: { db: Db; actor: UserActor; input: unknown }): Promise<RunnerPool> {
  requireAdmin(opts.actor, "change runner pools");
  const values = parseInput(zRunnerPoolInput, opts.input);
  return withUniqueName("pool", values.name, () =>
    refusableTransaction(opts.db, "createRunnerPool", async (tx, refuse) => {
      await checkPoolAccounts(tx, values, refuse);
      checkAllowedHosts(values, refuse);
      if (await tx.runnerPool.findUnique({ where: { name: values.name }, select: { id: true } })) refuse(nameTaken("pool", values.name));
      const pool = await tx.runnerPool.create({ data: values });
      await recordAudit(tx, {
        actor: auditActorOf(opts.actor),
        action: "runner_pool.create",
        objectType: "RunnerPool",
        objectId: pool.id,
        detail: { toVersion: 1, changes: changedFields({} as PoolValues, values, POOL_FIELDS) },
      });
      return pool;
    }),
  );
}

async function refuseIfStale<T extends { id: string; version: number }>(
  db: Db,
  refuse: Refuse,
  objectType: string,
  what: string,
  row: T,
  expectedVersion: number,
  current: Record<string, unknown>,
) {
  if (row.version === expectedVersion) return;
  refuse(await staleVersionError({ db, objectType, objectId: row.id, what, expectedVersion, currentVersion: row.version, current }));
}

export async function updateRunnerPool(opts: { db: Db; actor: UserActor; input: unknown }): Promise<RunnerPool> {
  requireAdmin(opts.actor, "change runner pools");
  const { id, expectedVersion, ...values } = parseInput(zUpdateRunnerPoolInput, opts.input);
  return withUniqueName("pool", values.name, () =>
    refusableTransaction(opts.db, "updateRunnerPool", async (tx, refuse) => {
      await lockRows(tx, "RunnerPool", [id]);
      const row = (await tx.runnerPool.findUnique({ where: { id } })) ?? refuse(new AppError("NOT_FOUND", "No such runner pool.", { reason: "no_such_pool" }));
      await refuseIfStale(tx, refuse, "RunnerPool", `Pool ${row.name}`, row, expectedVersion, pick(row, POOL_FIELDS));
      const changes = changedFields(pick(row, POOL_FIELDS), values, POOL_FIELDS);
      if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${row.version}.`, { reason: "unchanged" }));
      await checkPoolAccounts(tx, values, refuse);
      checkAllowedHosts(values, refuse);
      await checkNamingGrants(tx, row.name, id, values, refuse);
      const version = row.version + 1;
      const pool = await tx.runnerPool.update({ where: { id }, data: { ...values, version } });
      await recordAudit(tx, {
        actor: auditActorOf(opts.actor),
        action: "runner_pool.update",
        objectType: "RunnerPool",
        objectId: id,
        detail: { fromVersion: row.version, toVersion: version, changes },
      });
      return pool;
    }),
  );
}

/** Deletes a pool; attempts that ran on it keep their history (their pool reference empties). */
export async function deleteRunnerPool(opts: { db: Db; actor: UserActor; id: string; expectedVersion: number }) {
  requireAdmin(opts.actor, "change runner pools");
  return refusableTransaction(opts.db, "deleteRunnerPool", async (tx, refuse) => {
    await lockRows(tx, "RunnerPool", [opts.id]);
    const row = (await tx.runnerPool.findUnique({ where: { id: opts.id } })) ?? refuse(new AppError("NOT_FOUND", "No such runner pool.", { reason: "no_such_pool" }));
    await refuseIfStale(tx, refuse, "RunnerPool", `Pool ${row.name}`, row, opts.expectedVersion, pick(row, POOL_FIELDS));
    const active = await tx.dispatchAttempt.count({ where: { runnerPoolId: row.id, status: { in: ["queued", "starting", "running"] } } });
    if (active > 0) refuse(new AppError("CONFLICT", `${row.name} has ${active} active attempt${active === 1 ? "" : "s"}: wait for them to finish.`, { reason: "pool_busy" }));
    const naming = await grantsNaming(tx, row.id);
    if (naming.length > 0) {
      refuse(new AppError("CONFLICT", `Grants name ${row.name} (${naming.map((g) => g.name).join(", ")}): remove it from them first.`, { reason: "pool_named_by_grant" }));
    }
    await tx.runnerPool.delete({ where: { id: row.id } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "runner_pool.delete", objectType: "RunnerPool", objectId: row.id, detail: { name: row.name, version: row.version } });
    return { id: row.id };
  });
}

type AccountValues = ReturnType<typeof zServiceAccountInput.parse>;

export async function createServiceAccount(opts: { db: Db; actor: UserActor; input: unknown }): Promise<ServiceAccount> {
  requireAdmin(opts.actor, "change service accounts");
  const values = parseInput(zServiceAccountInput, opts.input);
  return withUniqueName("service account", values.name, () =>
    refusableTransaction(opts.db, "createServiceAccount", async (tx, refuse) => {
      if (await tx.serviceAccount.findUnique({ where: { name: values.name }, select: { id: true } })) refuse(nameTaken("service account", values.name));
      const account = await tx.serviceAccount.create({ data: values });
      await recordAudit(tx, {
        actor: auditActorOf(opts.actor),
        action: "service_account.create",
        objectType: "ServiceAccount",
        objectId: account.id,
        detail: { toVersion: 1, changes: changedFields({} as AccountValues, values, ACCOUNT_FIELDS) },
      });
      return account;
    }),
  );
}

export async function updateServiceAccount(opts: { db: Db; actor: UserActor; input: unknown }): Promise<ServiceAccount> {
  requireAdmin(opts.actor, "change service accounts");
  const { id, expectedVersion, ...values } = parseInput(zUpdateServiceAccountInput, opts.input);
  return withUniqueName("service account", values.name, () =>
    refusableTransaction(opts.db, "updateServiceAccount", async (tx, refuse) => {
      await lockRows(tx, "ServiceAccount", [id]);
      const row =
        (await tx.serviceAccount.findUnique({ where: { id } })) ??
        refuse(new AppError("NOT_FOUND", "No such service account.", { reason: "no_such_service_account" }));
      await refuseIfStale(tx, refuse, "ServiceAccount", `Service account ${row.name}`, row, expectedVersion, pick(row, ACCOUNT_FIELDS));
      const changes = changedFields(pick(row, ACCOUNT_FIELDS), values, ACCOUNT_FIELDS);
      if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${row.version}.`, { reason: "unchanged" }));
      if (values.privileged) {
        const untrusted = await tx.runnerPool.findMany({
          where: { trustTier: "untrusted", OR: [{ runtimeServiceAccountId: id }, { runnerServiceAccountId: id }] },
          select: { name: true },
        });
        if (untrusted.length > 0) {
          refuse(
            fieldError(
              "UNPROCESSABLE",
              "privileged",
              `Untrusted pool${untrusted.length === 1 ? "" : "s"} ${untrusted.map((p) => p.name).join(", ")} run${untrusted.length === 1 ? "s" : ""} under this account, and untrusted code never runs under a privileged account: move ${untrusted.length === 1 ? "it" : "them"} to another account first.`,
              "privileged_account_on_untrusted_pool",
            ),
          );
        }
      }
      const version = row.version + 1;
      const account = await tx.serviceAccount.update({ where: { id }, data: { ...values, version } });
      await recordAudit(tx, {
        actor: auditActorOf(opts.actor),
        action: "service_account.update",
        objectType: "ServiceAccount",
        objectId: id,
        detail: { fromVersion: row.version, toVersion: version, changes },
      });
      return account;
    }),
  );
}

export async function deleteServiceAccount(opts: { db: Db; actor: UserActor; id: string; expectedVersion: number }) {
  requireAdmin(opts.actor, "change service accounts");
  return refusableTransaction(opts.db, "deleteServiceAccount", async (tx, refuse) => {
    await lockRows(tx, "ServiceAccount", [opts.id]);
    const row =
      (await tx.serviceAccount.findUnique({ where: { id: opts.id } })) ??
      refuse(new AppError("NOT_FOUND", "No such service account.", { reason: "no_such_service_account" }));
    await refuseIfStale(tx, refuse, "ServiceAccount", `Service account ${row.name}`, row, opts.expectedVersion, pick(row, ACCOUNT_FIELDS));
    const pools = await tx.runnerPool.findMany({ where: { OR: [{ runtimeServiceAccountId: row.id }, { runnerServiceAccountId: row.id }] }, select: { name: true } });
    if (pools.length > 0) refuse(new AppError("CONFLICT", `Pool${pools.length === 1 ? "" : "s"} ${pools.map((p) => p.name).join(", ")} use${pools.length === 1 ? "s" : ""} ${row.name}: pick other accounts for them first.`, { reason: "account_in_use" }));
    await tx.serviceAccount.delete({ where: { id: row.id } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "service_account.delete", objectType: "ServiceAccount", objectId: row.id, detail: { name: row.name, version: row.version } });
    return { id: row.id };
  });
}
