import { describe, expect, it } from "vitest";
import { failedCheck, REPO, release, rule } from "./fixtures";
import { matchTriggers } from "./matcher";
import { resolvePrecedence } from "./precedence";
import type { TriggerRule } from "./trigger-rule";

const SIG = { failureSignature: "077fcdd2482487b2", pullRequestNumber: 12 };

function decide(rules: TriggerRule[], event = failedCheck()) {
  const { candidates } = matchTriggers({ event, rules, repository: REPO, facts: SIG });
  return resolvePrecedence(candidates, rules);
}

const global = rule({ kind: "failed_check", id: "global", name: "any failure" });
const mine = rule({ kind: "failed_check", id: "mine", name: "web CI", repositoryId: REPO.id });

describe("resolvePrecedence", () => {
  it("lets one failure make one run: the repository's rule wins over a rule for every repository", () => {
    const { fire, superseded } = decide([global, mine]);
    expect(fire.map((c) => c.ruleId)).toEqual(["mine"]);
    expect(superseded).toHaveLength(1);
    expect(superseded[0]).toMatchObject({ candidate: { ruleId: "global" }, by: { ruleId: "mine" } });
    expect(superseded[0]?.why).toBe('superseded by rule "web CI": a repository\'s rule takes precedence over a rule for every repository');
    expect(fire[0]?.precedence).toMatchObject({
      winnerRuleId: "mine",
      competitors: [
        { ruleId: "mine", scope: "repository", outcome: "fires" },
        { ruleId: "global", scope: "global", outcome: "superseded" },
      ],
    });
    // The order the rules were loaded in does not matter.
    expect(decide([mine, global]).fire.map((c) => c.ruleId)).toEqual(["mine"]);
  });

  it("prefers the rule with more match keys, then the older rule", () => {
    const specific = rule({ kind: "failed_check", id: "specific", name: "test job", job: "test" });
    expect(decide([global, specific]).fire.map((c) => c.ruleId)).toEqual(["specific"]);
    expect(decide([global, specific]).superseded[0]?.why).toContain("more specific (1 match key against 0)");
    const twin = rule({ kind: "failed_check", id: "twin", name: "any failure, again" });
    const tie = decide([global, twin]);
    expect(tie.fire.map((c) => c.ruleId)).toEqual(["global"]);
    expect(tie.superseded[0]?.why).toContain("the older rule wins");
  });

  it("fires a rule set to fire alongside the winner, and says so", () => {
    const alongside = { ...global, alsoFire: true };
    const { fire, superseded } = decide([alongside, mine]);
    expect(fire.map((c) => c.ruleId).sort()).toEqual(["global", "mine"]);
    expect(superseded).toEqual([]);
    expect(fire[0]?.precedence?.why).toBe('rule "web CI" is the most specific; "any failure" also fires: set to fire alongside');
    // Two runs: their dedupe keys differ by the rule.
    expect(new Set(fire.map((c) => c.dedupeKey)).size).toBe(2);
  });

  it("keeps separate failures apart: each subject has its own winner", () => {
    const rules = [global, mine];
    const a = matchTriggers({ event: failedCheck(), rules, repository: REPO, facts: SIG }).candidates;
    const b = matchTriggers({ event: failedCheck({ jobName: "lint" }), rules, repository: REPO, facts: SIG }).candidates;
    const { fire } = resolvePrecedence([...a, ...b], rules);
    expect(fire.map((c) => c.ruleId)).toEqual(["mine", "mine"]);
  });

  it("makes one release review whatever the rules say: its dedupe key names no rule", () => {
    const rules = [
      rule({ kind: "release", id: "r1", name: "release", taskKind: "release_review", alsoFire: true }),
      rule({ kind: "release", id: "r2", name: "release again", taskKind: "release_review", alsoFire: true }),
    ];
    const { candidates } = matchTriggers({ event: release(), rules, repository: REPO });
    const { fire, superseded } = resolvePrecedence(candidates, rules);
    expect(fire.map((c) => c.ruleId)).toEqual(["r1"]);
    expect(superseded.map((s) => s.candidate.ruleId)).toEqual(["r2"]);
    expect(fire[0]?.precedence?.why).toContain("a release makes one run whatever the rules");
  });

  it("passes a lone candidate through untouched", () => {
    const { fire, superseded } = decide([mine]);
    expect(fire).toHaveLength(1);
    expect(fire[0]?.precedence).toBeNull();
    expect(superseded).toEqual([]);
  });
});
