// The decision part of evaluation, shared by the live path and the trigger dry run: a loaded
// event and the repository's live rules -> which rules match, which of those fire (precedence)
// and which are superseded, with their dedupe keys, and whether the whole event is refused. Pure.
// The live path then commits the plan (evaluate.ts); the dry run shows it (dry-run.ts).
import type { Db, Repository } from "@/server/db";
import { matchTriggers, type EventFacts, type MatchResult, type RepositoryFacts } from "@/server/domain/triggers/matcher";
import { resolvePrecedence, type Firing, type Superseded } from "@/server/domain/triggers/precedence";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";
import type { LoadedEvent } from "./load";

export type EvaluationPlan = Omit<MatchResult, "candidates"> & {
  /** The candidates that make runs (or duplicate drops), in dedupe-key order: the lock order. */
  fire: Firing[];
  /** Candidates another rule of the same subject took precedence over. */
  superseded: Superseded[];
};

export const repositoryFacts = (r: Pick<Repository, "id" | "fullName" | "autoRunOnFailedCheck" | "dispatchLabel">): RepositoryFacts => ({
  id: r.id,
  fullName: r.fullName,
  autoRunOnFailedCheck: r.autoRunOnFailedCheck,
  dispatchLabel: r.dispatchLabel,
});

export function matchFactsOf(loaded: Pick<LoadedEvent, "facts" | "extras">): EventFacts {
  const { facts } = loaded;
  return {
    changedFiles: facts.changedFiles,
    failureSignature: facts.failure?.signature ?? null,
    contextDigest: facts.contextDigest,
    pullRequestNumber: facts.pullRequestNumber,
    headSha: facts.headSha,
    headBranch: facts.headBranch,
    release: facts.release,
    ...(loaded.extras.artifacts.length > 0 ? { artifactDigests: facts.artifacts.flatMap((a) => (a.digest ? [a.digest] : [])) } : {}),
  };
}

const byKey = (a: { dedupeKey: string }, b: { dedupeKey: string }) => (a.dedupeKey < b.dedupeKey ? -1 : a.dedupeKey > b.dedupeKey ? 1 : 0);

export function planEvaluation(loaded: Pick<LoadedEvent, "event" | "repository" | "facts" | "extras">, rules: readonly TriggerRule[]): EvaluationPlan {
  const { candidates, ...match } = matchTriggers({ event: loaded.event, rules, repository: repositoryFacts(loaded.repository), facts: matchFactsOf(loaded) });
  const { fire, superseded } = resolvePrecedence(candidates, rules);
  return { ...match, fire: fire.sort(byKey), superseded };
}

/** The enabled rules the live path evaluates for a repository, in precedence's tie-break order. */
export function liveRulesFor(db: Db, repositoryId: string) {
  return db.triggerRule.findMany({
    where: { enabled: true, OR: [{ repositoryId: null }, { repositoryId }] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** Runs that already hold some of the plan's dedupe keys (their candidates become drops). */
export async function heldKeys(db: Db, keys: readonly string[]): Promise<Map<string, { id: string; number: number }>> {
  if (keys.length === 0) return new Map();
  const rows = await db.agentDispatchRun.findMany({ where: { dedupeKey: { in: [...keys] } }, select: { id: true, number: true, dedupeKey: true } });
  return new Map(rows.map((r) => [r.dedupeKey, { id: r.id, number: r.number }]));
}
