import type { Db, Tx } from "@/server/db";
import type { BundleAttribution } from "../context/context-bundle";
import { loadCurrentPolicy, prepareDecision, storeDecisions, type PreparedDecision } from "../policy/decide";
import { attributionFacts, type Observation, type ObservedCheck } from "./attribute";

// A red check on a branch with agent activity gets an attribution decision from the policy
// engine, stored with the facts it used (the observations) and linked to the runs it concerns,
// so the run view shows it with its proof and the next agent's bundle carries it.

export const attributionSubject = (repositoryId: string, branch: string, check: string, headSha: string) => `red_check|${check}|${repositoryId}:${branch}@${headSha}`;
const subjectPrefix = (repositoryId: string, branch: string, check: string) => `red_check|${check}|${repositoryId}:${branch}@`;

export const attributionGuidance: Record<string, string> = {
  ours: "Our edits are in range of this failure: treat it as your regression and fix it first.",
  pre_existing: "This check was already red before our edits: report it, do not chase it.",
  unknown: "This failure cannot be placed: read its output before assuming either way.",
};

export type RedCheck = { repositoryId: string; branch: string; check: string; headSha: string; now: Date };

/**
 * The attribution of one red check, evaluated but not stored: reads only stored observations,
 * the previous decision and the last green run, so it can run before the evaluation transaction
 * (the trigger run's bundle carries it) and be stored inside it by storeAttribution. Null when
 * no pass of ours ever looked at the branch.
 */
export async function prepareAttribution(db: Db, opts: RedCheck): Promise<PreparedAttribution | null> {
  const rows = await db.ciObservation.findMany({
    where: { repositoryId: opts.repositoryId, branch: opts.branch, observedAt: { lte: opts.now } },
    orderBy: { observedAt: "asc" },
    take: 500,
  });
  // No pass of ours ever looked at this branch: nothing of ours to attribute.
  if (rows.length === 0) return null;
  const observations: Observation[] = rows.map((r) => ({ id: r.id, headSha: r.headSha, observedAt: r.observedAt, checks: r.checks as unknown as ObservedCheck[], leftEdits: r.leftEdits }));
  const previous = await db.policyDecision.findFirst({
    where: { subject: { startsWith: subjectPrefix(opts.repositoryId, opts.branch, opts.check) }, policyVersion: { policy: { kind: "attribution" } } },
    orderBy: { createdAt: "desc" },
    select: { value: true, createdAt: true },
  });
  const green = await db.pipeline.findFirst({
    where: { repositoryId: opts.repositoryId, headBranch: opts.branch, checkName: opts.check, conclusion: "success" },
    orderBy: { completedAt: "desc" },
    select: { completedAt: true },
  });
  const { facts } = attributionFacts({
    failing: { name: opts.check, headSha: opts.headSha },
    observations,
    previous: previous ? { attribution: String(previous.value), decidedAt: previous.createdAt } : null,
    lastGreenAt: green?.completedAt ?? null,
  });
  const prepared = prepareDecision(await loadCurrentPolicy(db, "attribution"), facts);
  const value = String(prepared.decision.value);
  return {
    subject: attributionSubject(opts.repositoryId, opts.branch, opts.check, opts.headSha),
    latestRunId: rows.at(-1)?.runId ?? null,
    prepared,
    entry: bundleEntry(opts.check, value, prepared.decision.rule, facts.observed_history?.value),
  };
}

export type PreparedAttribution = {
  subject: string;
  /** The run of the latest observation: the decision's run when the failure started none. */
  latestRunId: string | null;
  prepared: PreparedDecision;
  /** What the next agent's bundle and prompt carry. */
  entry: BundleAttribution;
};

/**
 * Stores a prepared attribution, linked to the runs this failure started, else to the latest run
 * on the branch. A failure that started no run and was attributed before (a redelivery, a
 * duplicate) adds no decision: the stored one stands. The caller holds the pipeline's lock, so
 * two deliveries of one failure cannot both find none.
 */
export async function storeAttribution(tx: Tx, made: PreparedAttribution, runIds: string[]): Promise<{ value: string; decisionIds: string[] }> {
  if (runIds.length === 0) {
    const earlier = await tx.policyDecision.findFirst({
      where: { subject: made.subject, policyVersion: { policy: { kind: "attribution" } } },
      orderBy: { createdAt: "desc" },
      select: { id: true, value: true },
    });
    if (earlier) return { value: String(earlier.value), decisionIds: [] };
  }
  const linked = runIds.length > 0 ? runIds : made.latestRunId ? [made.latestRunId] : [null];
  const stored = await storeDecisions(
    tx,
    linked.map((runId) => ({ prepared: made.prepared, runId, subject: made.subject })),
  );
  return { value: String(made.prepared.decision.value), decisionIds: stored.map((d) => d.id) };
}

export async function attributeRedCheck(tx: Tx, opts: RedCheck & { runIds: string[] }): Promise<{ value: string; decisionIds: string[] } | null> {
  const made = await prepareAttribution(tx, opts);
  return made ? storeAttribution(tx, made, opts.runIds) : null;
}

function bundleEntry(check: string, value: string, rule: string | null, history: unknown): BundleAttribution {
  const attribution = value === "ours" || value === "pre_existing" ? value : "unknown";
  return { check, attribution, rule, guidance: attributionGuidance[attribution]!, history: typeof history === "string" ? history : "" };
}

/** The latest attribution per red check on a branch, for the next agent (bundle and prompt). */
export async function currentAttributions(tx: Tx, opts: { repositoryId: string; branch: string }) {
  const decisions = await tx.policyDecision.findMany({
    where: { subject: { startsWith: "red_check|", contains: `|${opts.repositoryId}:${opts.branch}@` }, policyVersion: { policy: { kind: "attribution" } } },
    orderBy: { createdAt: "desc" },
    take: 100,
    select: { id: true, subject: true, value: true, ruleName: true, createdAt: true, facts: true },
  });
  const latest = new Map<string, BundleAttribution & { decisionId: string }>();
  const seen = new Set<string>();
  for (const d of decisions) {
    const check = d.subject.split("|")[1] ?? "";
    const value = String(d.value);
    if (seen.has(check)) continue;
    seen.add(check);
    // Green clears it: a check that passed on the branch since is no one's red check.
    const green = await tx.pipeline.findFirst({
      where: { repositoryId: opts.repositoryId, headBranch: opts.branch, checkName: check, conclusion: "success", completedAt: { gt: d.createdAt } },
      select: { id: true },
    });
    if (green) continue;
    const facts = d.facts as { observed_history?: { value?: unknown } } | null;
    latest.set(check, { ...bundleEntry(check, value, d.ruleName, facts?.observed_history?.value), decisionId: d.id });
  }
  return [...latest.values()];
}
