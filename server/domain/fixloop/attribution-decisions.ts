import type { Tx } from "@/server/db";
import { decide } from "../policy/decide";
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

export async function attributeRedCheck(
  tx: Tx,
  opts: { repositoryId: string; branch: string; check: string; headSha: string; runIds: string[]; now: Date },
): Promise<{ value: string; decisionIds: string[] } | null> {
  const rows = await tx.ciObservation.findMany({
    where: { repositoryId: opts.repositoryId, branch: opts.branch, observedAt: { lte: opts.now } },
    orderBy: { observedAt: "asc" },
    take: 500,
  });
  // No pass of ours ever looked at this branch: nothing of ours to attribute.
  if (rows.length === 0) return null;
  const observations: Observation[] = rows.map((r) => ({ id: r.id, headSha: r.headSha, observedAt: r.observedAt, checks: r.checks as unknown as ObservedCheck[], leftEdits: r.leftEdits }));
  const previous = await tx.policyDecision.findFirst({
    where: { subject: { startsWith: subjectPrefix(opts.repositoryId, opts.branch, opts.check) }, policyVersion: { policy: { kind: "attribution" } } },
    orderBy: { createdAt: "desc" },
    select: { value: true, createdAt: true },
  });
  const green = await tx.pipeline.findFirst({
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
  // Linked to the runs this failure started, else to the latest run on the branch.
  let runIds = opts.runIds;
  if (runIds.length === 0) {
    const latest = rows.at(-1)?.runId;
    runIds = latest ? [latest] : [];
  }
  const subject = attributionSubject(opts.repositoryId, opts.branch, opts.check, opts.headSha);
  const made = [];
  for (const runId of runIds.length > 0 ? runIds : [null]) made.push(await decide({ db: tx, kind: "attribution", facts, runId, subject }));
  return { value: String(made[0]!.decision.value), decisionIds: made.map((m) => m.id) };
}

/** The latest attribution per red check on a branch, for the next agent (bundle and prompt). */
export async function currentAttributions(tx: Tx, opts: { repositoryId: string; branch: string }) {
  const decisions = await tx.policyDecision.findMany({
    where: { subject: { startsWith: "red_check|", contains: `|${opts.repositoryId}:${opts.branch}@` }, policyVersion: { policy: { kind: "attribution" } } },
    orderBy: { createdAt: "desc" },
    take: 100,
    select: { id: true, subject: true, value: true, ruleName: true, createdAt: true },
  });
  const latest = new Map<string, { check: string; attribution: string; rule: string | null; decisionId: string; guidance: string }>();
  for (const d of decisions) {
    const check = d.subject.split("|")[1] ?? "";
    const value = String(d.value);
    if (latest.has(check)) continue;
    // Green clears it: a check that passed on the branch since is no one's red check.
    const green = await tx.pipeline.findFirst({
      where: { repositoryId: opts.repositoryId, headBranch: opts.branch, checkName: check, conclusion: "success", completedAt: { gt: d.createdAt } },
      select: { id: true },
    });
    latest.set(check, { check, attribution: green ? "green" : value, rule: d.ruleName, decisionId: d.id, guidance: green ? "" : (attributionGuidance[value] ?? attributionGuidance.unknown!) });
  }
  return [...latest.values()].filter((a) => a.attribution !== "green");
}
