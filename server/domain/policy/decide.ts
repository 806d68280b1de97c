import type { Db, Prisma } from "@/server/db";
import type { PolicyKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import type { PolicyDecision } from "./decision";
import { evaluate, recheck, type RecheckResult } from "./evaluate";
import type { Facts } from "./facts";
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

export async function decide(opts: DecideOptions): Promise<StoredDecision> {
  const subject = opts.subject.trim();
  if (!subject) throw new AppError("BAD_REQUEST", "a decision needs a subject", { reason: "missing_subject" });

  let version = await currentVersion(opts.db, opts.kind);
  if (!version && isShippedKind(opts.kind)) {
    await ensureShippedPolicies(opts.db);
    version = await currentVersion(opts.db, opts.kind);
  }
  if (!version) throw new AppError("NOT_FOUND", `no policy ${opts.kind}`, { reason: "no_such_policy" });

  const definition = await loadDefinition(opts.db, version);
  // Throws PolicyFactError on refused facts, before anything is written.
  const decision = evaluate(definition, opts.facts, {
    property: opts.property,
    version: version.version,
    digest: version.digest,
  });
  const row = await opts.db.policyDecision.create({
    data: {
      policyVersionId: version.id,
      runId: opts.runId ?? null,
      subject,
      facts: decision.facts as Prisma.InputJsonValue,
      property: decision.property,
      value: decision.value,
      ruleName: decision.rule,
      proof: decision.proof as Prisma.InputJsonValue,
    },
    select: { id: true, createdAt: true },
  });
  return { id: row.id, policyVersionId: version.id, createdAt: row.createdAt, decision };
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
