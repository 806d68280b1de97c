import type { Db, Prisma } from "@/server/db";
import type { PolicyKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import type { PolicyDecision } from "./decision";
import { evaluate, recheck, type RecheckResult } from "./evaluate";
import type { Facts } from "./facts";
import type { PolicyDefinition } from "./model";
import { toPolicyDecision } from "./decisions";
import { ensureShippedPolicies, isShippedKind, loadDefinition } from "./store";

// The one way the rest of Airlock gets a policy decision. Every call reads the policy's
// current version (one small query, so a version saved by any process is used by the next
// call everywhere), evaluates it, and stores exactly one PolicyDecision row with the facts,
// the outcome, the proof and the version used. The fail-closed default is a decision like any
// other and is stored the same way.
//
// Facts the model refuses (a rules-only property asserted from outside, a value outside its
// type, a missing required fact) are NOT a decision: decide() throws PolicyFactError
// (UNPROCESSABLE, `reason` = the violated constraint, every violation in `details`) and stores
// nothing. The caller must fail closed (escalate to a person, require approval, refuse the
// write-back) and should record the refusal in its own event log.

export type DecideOptions = {
  db: Db;
  kind: PolicyKind;
  facts: Facts;
  /** Which rules-only property to decide; optional when the policy decides only one. */
  property?: string;
  /** The run the decision belongs to, if any (shown in its run view). */
  runId?: string | null;
  /** What was decided about, e.g. "attempt:<id>" or "write_back:<approval id>". */
  subject: string;
};

export type StoredDecision = {
  /** The PolicyDecision row. */
  id: string;
  policyVersionId: string;
  createdAt: Date;
  decision: PolicyDecision;
};

type CurrentVersion = { id: string; version: number; digest: string };

async function currentVersion(db: Db, kind: PolicyKind): Promise<CurrentVersion | undefined> {
  const [row] = await db.$queryRaw<CurrentVersion[]>`
    SELECT v."id", v."version", v."digest"
    FROM "Policy" p JOIN "PolicyVersion" v ON v."policyId" = p."id" AND v."version" = p."version"
    WHERE p."kind" = ${kind}::"PolicyKind"`;
  return row;
}

function subjectOf(subject: string): string {
  const trimmed = subject.trim();
  if (!trimmed) throw new AppError("BAD_REQUEST", "a decision needs a subject", { reason: "missing_subject" });
  return trimmed;
}

export async function decide(opts: DecideOptions): Promise<StoredDecision> {
  const subject = subjectOf(opts.subject);
  const policy = await loadCurrentPolicy(opts.db, opts.kind);
  // Throws PolicyFactError on refused facts, before anything is written.
  const prepared = prepareDecision(policy, opts.facts, opts.property);
  const [stored] = await storeDecisions(opts.db, [{ prepared, runId: opts.runId, subject }]);
  return stored!;
}

// decide() in parts, for a caller that must keep its own transaction short (the attempt claim):
// load the current policy and evaluate outside the transaction, then store every decision inside
// it in one statement. A decision is still stored exactly once, with the version that made it.

export type CurrentPolicy = { version: CurrentVersion; definition: PolicyDefinition };

/** The policy's current version and its (cached) definition: one small query on a cache hit. */
export async function loadCurrentPolicy(db: Db, kind: PolicyKind): Promise<CurrentPolicy> {
  let version = await currentVersion(db, kind);
  if (!version && isShippedKind(kind)) {
    await ensureShippedPolicies(db);
    version = await currentVersion(db, kind);
  }
  if (!version) throw new AppError("NOT_FOUND", `no policy ${kind}`, { reason: "no_such_policy" });
  return { version, definition: await loadDefinition(db, version) };
}

export type PreparedDecision = { policyVersionId: string; decision: PolicyDecision };

/** Evaluates without storing. Pure; throws PolicyFactError on refused facts. */
export function prepareDecision(policy: CurrentPolicy, facts: Facts, property?: string): PreparedDecision {
  const decision = evaluate(policy.definition, facts, { property, version: policy.version.version, digest: policy.version.digest });
  return { policyVersionId: policy.version.id, decision };
}

/** Stores prepared decisions, one PolicyDecision row each, in one statement; results in input order. */
export async function storeDecisions(
  db: Db,
  items: { prepared: PreparedDecision; runId?: string | null; subject: string }[],
): Promise<StoredDecision[]> {
  const data = items.map(({ prepared: { policyVersionId, decision }, runId, subject }) => {
    return {
      policyVersionId,
      runId: runId ?? null,
      subject: subjectOf(subject),
      facts: decision.facts as Prisma.InputJsonValue,
      property: decision.property,
      value: decision.value,
      ruleName: decision.rule,
      proof: decision.proof as Prisma.InputJsonValue,
    };
  });
  if (data.length === 0) return [];
  const rows =
    data.length === 1
      ? [await db.policyDecision.create({ data: data[0]!, select: { id: true, createdAt: true } })]
      : await db.policyDecision.createManyAndReturn({ data, select: { id: true, createdAt: true } });
  // PostgreSQL returns a multi-row INSERT ... VALUES ... RETURNING in VALUES order (bulk inserts
  // elsewhere, e.g. Django's bulk_create, rely on the same).
  return rows.map((row, i) => ({ id: row.id, policyVersionId: data[i]!.policyVersionId, createdAt: row.createdAt, decision: items[i]!.prepared.decision }));
}

export type RecheckedDecision = RecheckResult & {
  decisionId: string;
  /** "stored": the version that made the decision (must agree); "current": today's version. */
  against: "stored" | "current";
  version: { id: string; version: number; digest: string };
};

/**
 * Re-evaluates a stored decision's facts. Against the stored version (the default) it must give
 * the same value from the same rule: that is what makes a stored proof checkable. Against the
 * current version it answers "would today's rules decide the same?".
 */
export async function recheckDecision(opts: {
  db: Db;
  decisionId: string;
  against?: "stored" | "current";
}): Promise<RecheckedDecision> {
  const against = opts.against ?? "stored";
  const row = await opts.db.policyDecision.findUnique({
    where: { id: opts.decisionId },
    include: { policyVersion: { select: { id: true, version: true, digest: true, policy: { select: { kind: true } } } } },
  });
  if (!row) throw new AppError("NOT_FOUND", "no such decision", { reason: "no_such_decision" });
  const storedDefinition = await loadDefinition(opts.db, row.policyVersion);
  const stored = toPolicyDecision(row, storedDefinition.subject);

  let version: CurrentVersion = row.policyVersion;
  if (against === "current") {
    const current = await currentVersion(opts.db, row.policyVersion.policy.kind);
    if (!current) throw new AppError("NOT_FOUND", `no policy ${row.policyVersion.policy.kind}`, { reason: "no_such_policy" });
    version = current;
  }
  const definition = against === "current" ? await loadDefinition(opts.db, version) : storedDefinition;
  const result = recheck(stored, definition, { version: version.version, digest: version.digest });
  return { ...result, decisionId: row.id, against, version };
}
