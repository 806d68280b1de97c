// Which of the matching rules fire. One failure (one request, one release) makes one run unless a
// person said otherwise: candidates with the same subject key (the dedupe key without the rule)
// compete, and the most specific rule wins:
//   1. a rule of the repository over a rule for every repository;
//   2. then the rule with more match keys set (workflow, job, step, branch, paths, signature);
//   3. then the older rule (the order rules are loaded in: created first, then id).
// A rule with `alsoFire` fires beside the winner. Kinds whose dedupe key names no rule (check
// rerun, release, flaky scan) are one run whatever the rules: only the winner fires. Pure; the
// verdict is stored with the run (trigger_matched) and as drops of the superseded candidates.
import type { Candidate } from "./matcher";
import { setKeys, type TriggerRule } from "./trigger-rule";

export type Competitor = { ruleId: string; ruleName: string; scope: "repository" | "global"; keys: number; outcome: "fires" | "superseded" };

export type Precedence = {
  /** The rule the subject's precedence picked. */
  winnerRuleId: string;
  /** One sentence: who won, over whom, and by which step of the order. */
  why: string;
  competitors: Competitor[];
};

export type Firing = Candidate & { precedence: Precedence | null };
export type Superseded = { candidate: Candidate; by: Candidate; why: string };

type Ranked = { candidate: Candidate; rule: TriggerRule | undefined; scope: "repository" | "global"; keys: number; order: number };

const scopeOf = (rule: TriggerRule | undefined): "repository" | "global" =>
  rule && (rule.repositoryId !== null || (rule.repositoryFullName ?? null) !== null) ? "repository" : "global";
const keyCount = (rule: TriggerRule | undefined) => (rule ? setKeys(rule).filter((k) => k !== "repository").length : 0);

/** -1 when a outranks b. */
function compare(a: Ranked, b: Ranked): number {
  if (a.scope !== b.scope) return a.scope === "repository" ? -1 : 1;
  if (a.keys !== b.keys) return b.keys - a.keys;
  return a.order - b.order;
}

function because(winner: Ranked, loser: Ranked): string {
  if (winner.scope !== loser.scope) return "a repository's rule takes precedence over a rule for every repository";
  if (winner.keys !== loser.keys) return `it is more specific (${winner.keys} match key${winner.keys === 1 ? "" : "s"} against ${loser.keys})`;
  return "equally specific: the older rule wins";
}

const q = (s: string) => JSON.stringify(s);

export function resolvePrecedence(candidates: readonly Candidate[], rules: readonly TriggerRule[]): { fire: Firing[]; superseded: Superseded[] } {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const byId = new Map(rules.map((r) => [r.id, r]));
  const groups = new Map<string, Ranked[]>();
  for (const candidate of candidates) {
    const rule = byId.get(candidate.ruleId);
    const ranked: Ranked = { candidate, rule, scope: scopeOf(rule), keys: keyCount(rule), order: index.get(candidate.ruleId) ?? Number.MAX_SAFE_INTEGER };
    const group = groups.get(candidate.subjectKey);
    if (group) group.push(ranked);
    else groups.set(candidate.subjectKey, [ranked]);
  }
  const fire: Firing[] = [];
  const superseded: Superseded[] = [];
  for (const group of groups.values()) {
    const [winner, ...rest] = [...group].sort(compare);
    if (!winner) continue;
    if (rest.length === 0) {
      fire.push({ ...winner.candidate, precedence: null });
      continue;
    }
    // The same dedupe key for every rule: a second run cannot exist, whatever alsoFire says.
    const ruleless = winner.candidate.dedupeKey === winner.candidate.subjectKey;
    const fires = (r: Ranked) => r === winner || (!ruleless && r.rule?.alsoFire === true);
    const competitors: Competitor[] = [winner, ...rest].map((r) => ({
      ruleId: r.candidate.ruleId,
      ruleName: r.candidate.ruleName,
      scope: r.scope,
      keys: r.keys,
      outcome: fires(r) ? "fires" : "superseded",
    }));
    const losers = rest.filter((r) => !fires(r));
    const also = rest.filter(fires);
    const parts = [
      losers.length > 0
        ? `rule ${q(winner.candidate.ruleName)} wins over ${losers.map((l) => `${q(l.candidate.ruleName)} (${because(winner, l)})`).join(", ")}`
        : `rule ${q(winner.candidate.ruleName)} is the most specific`,
      ...(also.length > 0 ? [`${also.map((a) => q(a.candidate.ruleName)).join(", ")} also fire${also.length === 1 ? "s" : ""}: set to fire alongside`] : []),
      ...(ruleless ? [`a ${winner.candidate.triggerKind.replace("_", " ")} makes one run whatever the rules`] : []),
    ];
    const precedence: Precedence = { winnerRuleId: winner.candidate.ruleId, why: parts.join("; "), competitors };
    fire.push({ ...winner.candidate, precedence });
    for (const a of also) fire.push({ ...a.candidate, precedence });
    for (const l of losers) {
      superseded.push({ candidate: l.candidate, by: winner.candidate, why: `superseded by rule ${q(winner.candidate.ruleName)}: ${because(winner, l)}` });
    }
  }
  return { fire, superseded };
}
