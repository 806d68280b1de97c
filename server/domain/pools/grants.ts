import type { ConfigGrant, Db, SecretGrant } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { forgetKnownSecrets } from "../ingest/known-secrets";
import { requireAdmin } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { fieldError, parseInput } from "../input";
import { refusableTransaction, type Refuse } from "../refusable";
import { changedFields, lockRows, staleVersionError } from "../versioned";
import {
  grantScopeProblem,
  secretGrantProblem,
  zConfigGrantFields,
  zSecretGrantFields,
  zUpdateConfigGrantFields,
  zUpdateSecretGrantFields,
  type GrantPoolFacts,
} from "./forms/schemas";

// Secret and ConfigMap grants: which stack may read which secret or config map (by name: values
// live in the server environment, never here), for which task kinds, on which pools. Airlock
// admins only. A privileged secret is refused for untrusted pools here, in the domain, whatever
// the caller (the form explains the same rule first). A grant is scoped by trust tier or to named
// pools; the named pools are locked while the grant is saved, so a concurrent pool edit (which
// checks the grants naming it) cannot make a privileged grant reach an untrusted pool.

const SECRET_FIELDS = ["secretName", "stackId", "privileged", "trustedPoolsOnly", "poolScope", "poolIds", "taskKinds"] as const;
const CONFIG_FIELDS = ["configMapName", "stackId", "trustedPoolsOnly", "poolScope", "poolIds", "taskKinds"] as const;

const pick = <T extends object, K extends keyof T>(row: T, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, row[k]])) as Pick<T, K>;

type SecretValues = Pick<SecretGrant, (typeof SECRET_FIELDS)[number]>;
type ConfigValues = Pick<ConfigGrant, (typeof CONFIG_FIELDS)[number]>;

/** The named pools, locked until the grant commits (empty for a trust-tier grant). */
async function lockNamedPools(db: Db, poolIds: readonly string[]): Promise<GrantPoolFacts[]> {
  if (poolIds.length === 0) return [];
  await lockRows(db, "RunnerPool", poolIds);
  return db.runnerPool.findMany({ where: { id: { in: [...poolIds] } }, select: { id: true, name: true, trustTier: true } });
}

/** The trust rules, checked again whatever parsed the input. */
async function refuseUntrustedPrivileged(db: Db, values: SecretValues, refuse: Refuse) {
  const problem = secretGrantProblem(values, await lockNamedPools(db, values.poolIds));
  if (problem) refuse(fieldError("UNPROCESSABLE", problem.field, problem.message, "privileged_secret_untrusted"));
}

async function refuseBadScope(db: Db, values: ConfigValues, refuse: Refuse) {
  const problem = grantScopeProblem(values, await lockNamedPools(db, values.poolIds));
  if (problem) refuse(fieldError("UNPROCESSABLE", problem.field, problem.message, "bad_pool_scope"));
}

async function checkStack(db: Db, stackId: string | null, refuse: Refuse) {
  if (stackId !== null && !(await db.agentStack.findUnique({ where: { id: stackId }, select: { id: true } }))) {
    refuse(fieldError("UNPROCESSABLE", "stackId", "No such stack.", "no_such_stack"));
  }
}

// (name, stack) is unique, but PostgreSQL never finds two NULL stacks equal: compare first.
async function refuseDuplicate(db: Db, kind: "secret" | "config", name: string, stackId: string | null, exceptId: string | null, refuse: Refuse) {
  const where = { stackId, ...(exceptId ? { id: { not: exceptId } } : {}) };
  const taken =
    kind === "secret"
      ? await db.secretGrant.findFirst({ where: { ...where, secretName: name }, select: { id: true } })
      : await db.configGrant.findFirst({ where: { ...where, configMapName: name }, select: { id: true } });
  if (taken) {
    const field = kind === "secret" ? "secretName" : "configMapName";
    refuse(fieldError("CONFLICT", field, `${name} is already granted to ${stackId === null ? "every stack" : "this stack"}: edit that grant.`, "grant_exists"));
  }
}

async function staleOrMissing<T extends { id: string; version: number }>(
  db: Db,
  refuse: Refuse,
  objectType: "SecretGrant" | "ConfigGrant",
  row: T | null,
  expectedVersion: number,
  what: (row: T) => string,
  current: (row: T) => Record<string, unknown>,
): Promise<T> {
  if (!row) return refuse(new AppError("NOT_FOUND", "No such grant.", { reason: "no_such_grant" }));
  if (row.version !== expectedVersion) {
    refuse(await staleVersionError({ db, objectType, objectId: row.id, what: what(row), expectedVersion, currentVersion: row.version, current: current(row) }));
  }
  return row;
}

export async function createSecretGrant(opts: { db: Db; actor: UserActor; input: unknown }): Promise<SecretGrant> {
  requireAdmin(opts.actor, "grant secrets");
  const values = parseInput(zSecretGrantFields, opts.input);
  const grant = await refusableTransaction(opts.db, "createSecretGrant", async (tx, refuse) => {
    await refuseUntrustedPrivileged(tx, values, refuse);
    await checkStack(tx, values.stackId, refuse);
    await refuseDuplicate(tx, "secret", values.secretName, values.stackId, null, refuse);
    const row = await tx.secretGrant.create({ data: values });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "secret_grant.create",
      objectType: "SecretGrant",
      objectId: row.id,
      detail: { toVersion: 1, changes: changedFields({} as SecretValues, values, SECRET_FIELDS) },
    });
    return row;
  });
  // Redaction learns the new name at once (ingest caches grant names briefly).
  forgetKnownSecrets();
  return grant;
}

export async function updateSecretGrant(opts: { db: Db; actor: UserActor; input: unknown }): Promise<SecretGrant> {
  requireAdmin(opts.actor, "grant secrets");
  const { id, expectedVersion, ...values } = parseInput(zUpdateSecretGrantFields, opts.input);
  const grant = await refusableTransaction(opts.db, "updateSecretGrant", async (tx, refuse) => {
    await lockRows(tx, "SecretGrant", [id]);
    const row = await staleOrMissing(
      tx,
      refuse,
      "SecretGrant",
      await tx.secretGrant.findUnique({ where: { id } }),
      expectedVersion,
      (r) => `The grant of ${r.secretName}`,
      (r) => pick(r, SECRET_FIELDS),
    );
    const changes = changedFields(pick(row, SECRET_FIELDS), values, SECRET_FIELDS);
    if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${row.version}.`, { reason: "unchanged" }));
    await refuseUntrustedPrivileged(tx, values, refuse);
    await checkStack(tx, values.stackId, refuse);
    await refuseDuplicate(tx, "secret", values.secretName, values.stackId, id, refuse);
    const version = row.version + 1;
    const updated = await tx.secretGrant.update({ where: { id }, data: { ...values, version } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "secret_grant.update",
      objectType: "SecretGrant",
      objectId: id,
      detail: { fromVersion: row.version, toVersion: version, changes },
    });
    return updated;
  });
  forgetKnownSecrets();
  return grant;
}

export async function createConfigGrant(opts: { db: Db; actor: UserActor; input: unknown }): Promise<ConfigGrant> {
  requireAdmin(opts.actor, "grant config maps");
  const values = parseInput(zConfigGrantFields, opts.input);
  return refusableTransaction(opts.db, "createConfigGrant", async (tx, refuse) => {
    await refuseBadScope(tx, values, refuse);
    await checkStack(tx, values.stackId, refuse);
    await refuseDuplicate(tx, "config", values.configMapName, values.stackId, null, refuse);
    const row = await tx.configGrant.create({ data: values });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "config_grant.create",
      objectType: "ConfigGrant",
      objectId: row.id,
      detail: { toVersion: 1, changes: changedFields({} as ConfigValues, values, CONFIG_FIELDS) },
    });
    return row;
  });
}

export async function updateConfigGrant(opts: { db: Db; actor: UserActor; input: unknown }): Promise<ConfigGrant> {
  requireAdmin(opts.actor, "grant config maps");
  const { id, expectedVersion, ...values } = parseInput(zUpdateConfigGrantFields, opts.input);
  return refusableTransaction(opts.db, "updateConfigGrant", async (tx, refuse) => {
    await lockRows(tx, "ConfigGrant", [id]);
    const row = await staleOrMissing(
      tx,
      refuse,
      "ConfigGrant",
      await tx.configGrant.findUnique({ where: { id } }),
      expectedVersion,
      (r) => `The grant of ${r.configMapName}`,
      (r) => pick(r, CONFIG_FIELDS),
    );
    const changes = changedFields(pick(row, CONFIG_FIELDS), values, CONFIG_FIELDS);
    if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${row.version}.`, { reason: "unchanged" }));
    await refuseBadScope(tx, values, refuse);
    await checkStack(tx, values.stackId, refuse);
    await refuseDuplicate(tx, "config", values.configMapName, values.stackId, id, refuse);
    const version = row.version + 1;
    const updated = await tx.configGrant.update({ where: { id }, data: { ...values, version } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "config_grant.update",
      objectType: "ConfigGrant",
      objectId: id,
      detail: { fromVersion: row.version, toVersion: version, changes },
    });
    return updated;
  });
}

export async function deleteGrant(opts: { db: Db; actor: UserActor; kind: "secret" | "config"; id: string; expectedVersion: number }) {
  requireAdmin(opts.actor, "revoke grants");
  const objectType = opts.kind === "secret" ? "SecretGrant" : "ConfigGrant";
  const result = await refusableTransaction(opts.db, "deleteGrant", async (tx, refuse) => {
    await lockRows(tx, objectType, [opts.id]);
    const row =
      opts.kind === "secret"
        ? await tx.secretGrant.findUnique({ where: { id: opts.id } }).then((r) => (r ? { ...r, name: r.secretName } : null))
        : await tx.configGrant.findUnique({ where: { id: opts.id } }).then((r) => (r ? { ...r, name: r.configMapName } : null));
    const found = await staleOrMissing(tx, refuse, objectType, row, opts.expectedVersion, (r) => `The grant of ${r.name}`, (r) => ({ name: r.name }));
    if (opts.kind === "secret") await tx.secretGrant.delete({ where: { id: found.id } });
    else await tx.configGrant.delete({ where: { id: found.id } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: `${opts.kind === "secret" ? "secret" : "config"}_grant.delete`,
      objectType,
      objectId: found.id,
      detail: { name: found.name, stackId: found.stackId, version: found.version },
    });
    return { id: found.id };
  });
  if (opts.kind === "secret") forgetKnownSecrets();
  return result;
}
