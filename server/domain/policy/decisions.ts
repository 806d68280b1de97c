import type { Db, Prisma } from "@/server/db";
import type { PolicyKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { zPolicyDecision, type PolicyDecision } from "./decision";
import { loadDefinition } from "./store";

// Stored decisions as the run view, the approval screen and the proof pages show them.

const decisionInclude = {
  policyVersion: { select: { id: true, version: true, digest: true, policy: { select: { kind: true, name: true } } } },
} as const;

type DecisionRow = Prisma.PolicyDecisionGetPayload<{ include: typeof decisionInclude }>;

/** A stored row back in the engine's shape; the JSON columns are validated, not trusted. */
export function toPolicyDecision(
  row: Pick<DecisionRow, "facts" | "property" | "value" | "ruleName" | "proof"> & {
    policyVersion: { version: number; digest: string; policy: { kind: PolicyKind } };
  },
  policySubject: string,
): PolicyDecision {
  const proof = row.proof as { explanation?: unknown } | null;
  const parsed = zPolicyDecision.safeParse({
    policy: { kind: row.policyVersion.policy.kind, version: row.policyVersion.version, digest: row.policyVersion.digest },
    subject: policySubject,
    property: row.property,
    value: row.value,
    rule: row.ruleName,
    explanation: typeof proof?.explanation === "string" ? proof.explanation : "",
    facts: row.facts,
    proof: row.proof,
  });
  if (!parsed.success) {
    throw new AppError("INTERNAL", "a stored policy decision does not parse", {
      reason: "corrupt_decision",
      details: { issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) },
    });
  }
  return parsed.data;
}

export type DecisionView = {
  id: string;
  runId: string | null;
  /** What the decision was about, as the caller named it ("attempt:<id>"). */
  subject: string;
  createdAt: Date;
  policyName: string;
  policyVersionId: string;
  decision: PolicyDecision;
};

async function toView(db: Db, row: DecisionRow): Promise<DecisionView> {
  const definition = await loadDefinition(db, row.policyVersion);
  return {
    id: row.id,
    runId: row.runId,
    subject: row.subject,
    createdAt: row.createdAt,
    policyName: row.policyVersion.policy.name,
    policyVersionId: row.policyVersion.id,
    decision: toPolicyDecision(row, definition.subject),
  };
}

export async function getDecision(opts: { db: Db; decisionId: string }): Promise<DecisionView> {
  const row = await opts.db.policyDecision.findUnique({ where: { id: opts.decisionId }, include: decisionInclude });
  if (!row) throw new AppError("NOT_FOUND", "no such decision", { reason: "no_such_decision" });
  return toView(opts.db, row);
}

/** A run's decisions, oldest first. */
export async function listRunDecisions(opts: { db: Db; runId: string; limit?: number }): Promise<DecisionView[]> {
  const rows = await opts.db.policyDecision.findMany({
    where: { runId: opts.runId },
    include: decisionInclude,
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: opts.limit ?? 200,
  });
  return Promise.all(rows.map((row) => toView(opts.db, row)));
}

/** The repository whose viewers may read a decision: its run's, or null for a decision outside any run. */
export async function decisionRepository(opts: { db: Db; decisionId: string }): Promise<{ repositoryId: string | null }> {
  const row = await opts.db.policyDecision.findUnique({
    where: { id: opts.decisionId },
    select: { run: { select: { repositoryId: true } } },
  });
  if (!row) throw new AppError("NOT_FOUND", "no such decision", { reason: "no_such_decision" });
  return { repositoryId: row.run?.repositoryId ?? null };
}
