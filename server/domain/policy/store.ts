import { transaction, type Db, type Prisma } from "@/server/db";
import type { PolicyKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { policyDigest } from "./digest";
import { diffPolicyDefinitions, type PolicyDiff } from "./diff";
import type { PolicyDefinition } from "./model";
import { reviewPolicy, type PolicyReview } from "./review";
import { shippedPolicies, type ShippedPolicyKind } from "./shipped";
import { definePolicy, parsePolicy } from "./validate";
import { utcMinute } from "@/server/lib/time";

// Policies in PostgreSQL. A Policy row names the current version; PolicyVersion rows are
// append-only (a definition and its digest), so a decision can always name what it ran and a
// stored version can be cached by its id in every process without invalidation.

export type PolicyVersionRecord = {
  id: string;
  version: number;
  digest: string;
  createdAt: Date;
  createdById: string | null;
  definition: PolicyDefinition;
};

export type StoredPolicy = {
  id: string;
  kind: PolicyKind;
  name: string;
  description: string;
  version: number;
  updatedAt: Date;
  current: PolicyVersionRecord;
};

// ---------------------------------------------------------------- definitions, cached by version id

const CACHE_LIMIT = 256;
const definitions = new Map<string, PolicyDefinition>();

/**
 * The parsed, frozen definition of a stored version. Versions never change after they are
 * written, so the id is a safe key across processes; the digest is checked on first load, so a
 * row edited behind the app's back is refused rather than evaluated under the wrong name.
 */
export function definitionOf(row: { id: string; digest: string; definition: Prisma.JsonValue }): PolicyDefinition {
  const cached = definitions.get(row.id);
  if (cached) return cached;
  const definition = definePolicy(parsePolicy(row.definition));
  const digest = policyDigest(definition);
  if (digest !== row.digest) {
    throw new AppError("INTERNAL", `policy version ${row.id} does not match its digest`, {
      reason: "policy_digest_mismatch",
      details: { versionId: row.id, stored: row.digest, computed: digest },
    });
  }
  if (definitions.size >= CACHE_LIMIT) {
    const oldest = definitions.keys().next().value;
    if (oldest !== undefined) definitions.delete(oldest);
  }
  definitions.set(row.id, definition);
  return definition;
}

/** The definition of a version whose id and digest are known; loads the JSON only on a cache miss. */
export async function loadDefinition(db: Db, version: { id: string; digest: string }): Promise<PolicyDefinition> {
  const cached = definitions.get(version.id);
  if (cached) return cached;
  const row = await db.policyVersion.findUniqueOrThrow({ where: { id: version.id }, select: { id: true, digest: true, definition: true } });
  return definitionOf(row);
}

const versionSelect = { id: true, version: true, digest: true, createdAt: true, createdById: true, definition: true } as const;

function toVersionRecord(row: Prisma.PolicyVersionGetPayload<{ select: typeof versionSelect }>): PolicyVersionRecord {
  return { ...row, definition: definitionOf(row) };
}

function asJson(definition: PolicyDefinition): Prisma.InputJsonValue {
  return definition as Prisma.InputJsonValue;
}

// ---------------------------------------------------------------- shipped policies

/** The names of the rules a diff adds, removes and changes: what audit entries and the list say. */
const ruleNames = (diff: PolicyDiff) => ({ added: diff.rules.added.map((r) => r.name), removed: diff.rules.removed.map((r) => r.name), changed: diff.rules.changed.map((r) => r.name) });

/** Each shipped definition's digest, computed once per process (the list reads it on every call). */
const shippedDigests = new Map<ShippedPolicyKind, string>();
const shippedDigest = (kind: ShippedPolicyKind) => shippedDigests.get(kind) ?? shippedDigests.set(kind, policyDigest(shippedPolicies[kind])).get(kind)!;

const shippedKinds = Object.keys(shippedPolicies) as ShippedPolicyKind[];

export function isShippedKind(kind: string): kind is ShippedPolicyKind {
  return Object.hasOwn(shippedPolicies, kind);
}

/**
 * Creates each shipped policy at version 1 when it is absent. Idempotent and safe under
 * concurrency (ON CONFLICT DO NOTHING); an existing policy is never touched, edited or not.
 */
export async function ensureShippedPolicies(db: Db): Promise<{ created: ShippedPolicyKind[] }> {
  const present = new Set((await db.policy.findMany({ select: { kind: true } })).map((p) => p.kind));
  const missing = shippedKinds.filter((kind) => !present.has(kind));
  if (missing.length === 0) return { created: [] };
  return transaction(db, "ensureShippedPolicies", async (tx) => {
    const created = await tx.policy.createManyAndReturn({
      data: missing.map((kind) => ({
        kind,
        name: shippedPolicies[kind].name,
        description: shippedPolicies[kind].description ?? "",
        version: 1,
      })),
      skipDuplicates: true,
      select: { id: true, kind: true },
    });
    const kinds = created.map((p) => p.kind).filter(isShippedKind);
    await tx.policyVersion.createMany({
      data: created.flatMap((p) =>
        isShippedKind(p.kind)
          ? [{ policyId: p.id, version: 1, definition: asJson(shippedPolicies[p.kind]), digest: policyDigest(shippedPolicies[p.kind]) }]
          : [],
      ),
    });
    return { created: kinds };
  });
}

/**
 * Brings each shipped policy that no person has edited up to the definition this build ships.
 * A version written by Airlock (no author: the first version, or an earlier upgrade) is the
 * product's own promise, so a rule the product adds (say, that a fork's push needs a person)
 * reaches every install; a version a person saved is theirs and is never replaced (the list says
 * how it differs from what Airlock ships). Run at worker start; idempotent, and two workers
 * starting at once upgrade once (the Policy row is locked). Decisions keep naming the version
 * that made them.
 */
export async function upgradeShippedPolicies(db: Db): Promise<{ upgraded: ShippedPolicyKind[] }> {
  await ensureShippedPolicies(db);
  const upgraded: ShippedPolicyKind[] = [];
  for (const kind of shippedKinds) {
    const shipped = shippedPolicies[kind];
    const digest = shippedDigest(kind);
    const done = await transaction(db, "upgradeShippedPolicies", async (tx) => {
      const [locked] = await tx.$queryRaw<{ id: string; version: number }[]>`
        SELECT "id", "version" FROM "Policy" WHERE "kind" = ${kind}::"PolicyKind" FOR UPDATE`;
      if (!locked) return false;
      const current = await getPolicyVersion({ db: tx, kind, version: locked.version });
      if (current.createdById !== null || current.digest === digest) return false;
      const version = locked.version + 1;
      await tx.policyVersion.create({ data: { policyId: locked.id, version, definition: asJson(shipped), digest, createdById: null } });
      await tx.policy.update({ where: { id: locked.id }, data: { version, name: shipped.name, description: shipped.description ?? "" } });
      const diff = diffPolicyDefinitions(current.definition, shipped);
      await recordAudit(tx, {
        actor: { userId: null, label: "Airlock (shipped policy upgrade)" },
        action: "policy.upgrade",
        objectType: "Policy",
        objectId: locked.id,
        detail: {
          kind,
          fromVersion: current.version,
          toVersion: version,
          digest,
          rules: ruleNames(diff),
        },
      });
      return true;
    });
    if (done) upgraded.push(kind);
  }
  return { upgraded };
}

// ---------------------------------------------------------------- reads

const policySelect = { id: true, kind: true, name: true, description: true, version: true, updatedAt: true } as const;

export async function getPolicyVersion(opts: { db: Db; kind: PolicyKind; version: number }): Promise<PolicyVersionRecord> {
  const row = await opts.db.policyVersion.findFirst({
    where: { policy: { kind: opts.kind }, version: opts.version },
    select: versionSelect,
  });
  if (!row) throw new AppError("NOT_FOUND", `policy ${opts.kind} has no version ${opts.version}`, { reason: "no_such_version" });
  return toVersionRecord(row);
}

/** A policy and its current version. A shipped policy missing from a fresh database is created first. */
export async function getPolicy(opts: { db: Db; kind: PolicyKind }): Promise<StoredPolicy> {
  let policy = await opts.db.policy.findUnique({ where: { kind: opts.kind }, select: policySelect });
  if (!policy && isShippedKind(opts.kind)) {
    await ensureShippedPolicies(opts.db);
    policy = await opts.db.policy.findUnique({ where: { kind: opts.kind }, select: policySelect });
  }
  if (!policy) throw new AppError("NOT_FOUND", `no policy ${opts.kind}`, { reason: "no_such_policy" });
  const current = await getPolicyVersion({ db: opts.db, kind: opts.kind, version: policy.version });
  return { ...policy, current };
}

export type PolicySummary = Omit<StoredPolicy, "current"> & {
  digest: string;
  subject: string;
  ruleCount: number;
  review: PolicyReview;
  /**
   * For a shipped policy a person edited: the rules by which it differs from what this build of
   * Airlock ships (an unedited one is upgraded at worker start). Null when it is the shipped text.
   */
  fromShipped: { added: string[]; removed: string[]; changed: string[] } | null;
};

/** Every policy with its current version's rule count and check results; creates missing shipped ones. */
export async function listPolicies(opts: { db: Db }): Promise<PolicySummary[]> {
  await ensureShippedPolicies(opts.db);
  const policies = await opts.db.policy.findMany({ select: policySelect, orderBy: { kind: "asc" } });
  const versions = await opts.db.policyVersion.findMany({
    where: { OR: policies.map((p) => ({ policyId: p.id, version: p.version })) },
    select: { ...versionSelect, policyId: true },
  });
  return policies.flatMap((policy) => {
    const row = versions.find((v) => v.policyId === policy.id);
    if (!row) return [];
    const definition = definitionOf(row);
    return [
      {
        ...policy,
        digest: row.digest,
        subject: definition.subject,
        ruleCount: definition.rules.length,
        review: reviewPolicy(definition),
        fromShipped: differenceFromShipped(policy.kind, row.digest, definition),
      },
    ];
  });
}

function differenceFromShipped(kind: PolicyKind, digest: string, definition: PolicyDefinition): PolicySummary["fromShipped"] {
  if (!isShippedKind(kind) || shippedDigest(kind) === digest) return null;
  // Rules the shipped text has and this one lacks are "removed" from it: read from the shipped side.
  const diff = diffPolicyDefinitions(shippedPolicies[kind], definition);
  return ruleNames(diff);
}

export type PolicyVersionSummary = {
  id: string;
  version: number;
  digest: string;
  createdAt: Date;
  createdBy: { id: string; name: string; email: string } | null;
  ruleCount: number;
};

/** Newest first. */
export async function listPolicyVersions(opts: { db: Db; kind: PolicyKind }): Promise<PolicyVersionSummary[]> {
  const rows = await opts.db.policyVersion.findMany({
    where: { policy: { kind: opts.kind } },
    select: versionSelect,
    orderBy: { version: "desc" },
  });
  const userIds = [...new Set(rows.flatMap((r) => (r.createdById ? [r.createdById] : [])))];
  const users = await opts.db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true, email: true } });
  return rows.map((row) => ({
    id: row.id,
    version: row.version,
    digest: row.digest,
    createdAt: row.createdAt,
    createdBy: users.find((u) => u.id === row.createdById) ?? null,
    ruleCount: definitionOf(row).rules.length,
  }));
}

export async function diffPolicyVersions(opts: {
  db: Db;
  kind: PolicyKind;
  from: number;
  to: number;
}): Promise<PolicyDiff & { from: { version: number; digest: string }; to: { version: number; digest: string } }> {
  const [from, to] = await Promise.all([
    getPolicyVersion({ db: opts.db, kind: opts.kind, version: opts.from }),
    getPolicyVersion({ db: opts.db, kind: opts.kind, version: opts.to }),
  ]);
  return {
    ...diffPolicyDefinitions(from.definition, to.definition),
    from: { version: from.version, digest: from.digest },
    to: { version: to.version, digest: to.digest },
  };
}

// ---------------------------------------------------------------- save

export type SavedPolicyVersion = { policy: StoredPolicy; diff: PolicyDiff; review: PolicyReview };

/**
 * Appends a new version. Refused (UNPROCESSABLE, every issue in `details.issues`) while the
 * definition violates its model; refused (CONFLICT, with what changed) unless `expectedVersion`
 * is the current version. The version, the Policy row and the audit entry commit together.
 */
export async function savePolicyVersion(opts: {
  db: Db;
  actor: AuditActor;
  kind: PolicyKind;
  definition: unknown;
  expectedVersion: number;
}): Promise<SavedPolicyVersion> {
  const definition = definePolicy(parsePolicy(opts.definition));
  if (definition.kind !== opts.kind) {
    throw new AppError("UNPROCESSABLE", `the definition is for policy ${definition.kind}, not ${opts.kind}`, {
      reason: "kind_mismatch",
    });
  }
  const digest = policyDigest(definition);
  if (isShippedKind(opts.kind)) await ensureShippedPolicies(opts.db);

  // Refusals are returned out of the transaction and thrown after it: nothing was written, and
  // the transaction helper would otherwise prefix its name to the message the user reads.
  const outcome = await transaction(opts.db, "savePolicyVersion", async (tx): Promise<{ refused: AppError } | { saved: SavedPolicyVersion }> => {
    // The row lock serialises saves of one policy; the stale check below then sees the truth.
    const [locked] = await tx.$queryRaw<{ id: string; version: number }[]>`
      SELECT "id", "version" FROM "Policy" WHERE "kind" = ${opts.kind}::"PolicyKind" FOR UPDATE`;
    if (!locked) return { refused: new AppError("NOT_FOUND", `no policy ${opts.kind}`, { reason: "no_such_policy" }) };
    const current = await getPolicyVersion({ db: tx, kind: opts.kind, version: locked.version });

    if (locked.version !== opts.expectedVersion) {
      const seen = await tx.policyVersion.findFirst({
        where: { policyId: locked.id, version: opts.expectedVersion },
        select: versionSelect,
      });
      const author = current.createdById
        ? await tx.user.findUnique({ where: { id: current.createdById }, select: { email: true } })
        : null;
      const diff = seen ? diffPolicyDefinitions(definitionOf(seen), current.definition) : null;
      const refused = new AppError(
        "CONFLICT",
        `policy ${opts.kind} is at version ${locked.version}, not ${opts.expectedVersion}: ` +
          `version ${locked.version} was saved by ${author?.email ?? "the system"} at ${utcMinute(current.createdAt)}. ` +
          "Reload to see what changed, then make your edit again.",
        {
          reason: "stale_version",
          details: { expectedVersion: opts.expectedVersion, currentVersion: locked.version, savedBy: author?.email ?? null, diff },
        },
      );
      return { refused };
    }
    if (current.digest === digest) {
      const refused = new AppError("BAD_REQUEST", `nothing to save: the definition is identical to version ${current.version}`, {
        reason: "unchanged",
      });
      return { refused };
    }

    const version = locked.version + 1;
    await tx.policyVersion.create({
      data: { policyId: locked.id, version, definition: asJson(definition), digest, createdById: opts.actor.userId },
    });
    await tx.policy.update({
      where: { id: locked.id },
      data: { version, name: definition.name, description: definition.description ?? "" },
    });
    const diff = diffPolicyDefinitions(current.definition, definition);
    const review = reviewPolicy(definition);
    await recordAudit(tx, {
      actor: opts.actor,
      action: "policy.save",
      objectType: "Policy",
      objectId: locked.id,
      detail: {
        kind: opts.kind,
        fromVersion: current.version,
        toVersion: version,
        digest,
        rules: ruleNames(diff),
        checks: review.checks
          ? { conflicts: review.checks.conflicts.length, gaps: review.checks.gaps.length, vacuous: review.checks.vacuous.length }
          : null,
      },
    });
    const policy = await getPolicy({ db: tx, kind: opts.kind });
    return { saved: { policy, diff, review } };
  });
  if ("refused" in outcome) throw outcome.refused;
  return outcome.saved;
}
