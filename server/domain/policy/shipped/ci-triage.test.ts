import { describe, expect, it } from "vitest";
import { conditionHolds } from "../conditions";
import { checkCompleteness } from "../checks/completeness";
import { checkConflicts } from "../checks/conflicts";
import { checkNonVacuity } from "../checks/non-vacuity";
import { formatRegion, regionContains } from "../checks/region";
import { evaluate } from "../evaluate";
import { factsFrom, type Facts } from "../facts";
import { PolicyFactError } from "../fact-check";
import type { Condition, PolicyDefinition, Rule } from "../model";
import { proofLeaves } from "../proof";
import { definePolicy } from "../validate";
import { ciTriagePolicy } from "./ci-triage";

function leavesOf(facts: Facts) {
  const decision = evaluate(ciTriagePolicy, facts);
  if (decision.proof.via !== "rule") throw new Error(`expected a rule to decide, got the default`);
  return {
    decision,
    leaves: proofLeaves(decision.proof.tree).map(({ property, test, expected, seen, source, holds }) => ({
      property,
      test,
      expected,
      seen,
      source,
      holds,
    })),
  };
}

function ruleNamed(policy: PolicyDefinition, name: string): Rule {
  const rule = policy.rules.find((r) => r.name === name);
  if (!rule) throw new Error(`no rule ${name}`);
  return rule;
}

/** The rule with one guard leaf taken out of its top-level `all`. */
function withoutGuard(rule: Rule, property: string, test: "isNot"): Rule {
  if (!("all" in rule.when)) throw new Error(`${rule.name} has no top-level all`);
  const kept = rule.when.all.filter((c: Condition) => !("property" in c && c.property === property && test in c));
  if (kept.length !== rule.when.all.length - 1) throw new Error(`guard ${property} ${test} not found in ${rule.name}`);
  return { ...rule, when: { all: kept } };
}

function variant(rules: Rule[]): PolicyDefinition {
  return definePolicy({ ...ciTriagePolicy, rules });
}

describe("CI triage: the seed's decisions, with proofs", () => {
  it("gives a known-flaky test that was never rerun exactly one rerun", () => {
    const { decision, leaves } = leavesOf(
      factsFrom("api", { failing_stage: "test", known_flaky: true, prior_reruns: 0 }),
    );
    expect(decision.value).toBe("rerun_once");
    expect(decision.rule).toBe("flaky_test_gets_one_rerun");
    expect(leaves).toEqual([
      { property: "reproduces_on_rerun", test: "isNot", expected: true, seen: null, source: "closed_world", holds: true },
      { property: "failing_stage", test: "is", expected: "test", seen: "test", source: "api", holds: true },
      { property: "known_flaky", test: "is", expected: true, seen: true, source: "api", holds: true },
      { property: "prior_reruns", test: "below", expected: 1, seen: 0, source: "api", holds: true },
    ]);
  });

  it("fixes a deterministic lint failure forward", () => {
    const { decision, leaves } = leavesOf(factsFrom("api", { failing_stage: "lint", known_flaky: false }));
    expect(decision.value).toBe("fix_forward");
    expect(decision.rule).toBe("deterministic_failure_fixes_forward");
    expect(leaves).toEqual([
      {
        property: "failing_stage",
        test: "inList",
        expected: ["lint", "test", "build"],
        seen: "lint",
        source: "api",
        holds: true,
      },
      { property: "known_flaky", test: "is", expected: false, seen: false, source: "api", holds: true },
    ]);
  });

  it("rolls back a failed deploy", () => {
    const { decision, leaves } = leavesOf(factsFrom("api", { failing_stage: "deploy", known_flaky: false }));
    expect(decision.value).toBe("roll_back");
    expect(decision.rule).toBe("deploy_failure_rolls_back");
    expect(leaves).toEqual([
      { property: "failing_stage", test: "is", expected: "deploy", seen: "deploy", source: "api", holds: true },
    ]);
  });

  it("escalates the flaky test once the rerun reproduced it", () => {
    // The same run as the first case, with the rerun's outcome added to what was known.
    const { decision, leaves } = leavesOf(
      factsFrom("api", { failing_stage: "test", known_flaky: true, prior_reruns: 1, reproduces_on_rerun: true }),
    );
    expect(decision.value).toBe("escalate_to_owner");
    expect(decision.rule).toBe("flaky_failure_reproduced_escalates");
    // The seed printed this first leaf as "closed world" (negation as failure); Airlock shows
    // the fact the guard actually saw, since failing_stage was asserted.
    expect(leaves).toEqual([
      { property: "failing_stage", test: "isNot", expected: "deploy", seen: "test", source: "api", holds: true },
      { property: "known_flaky", test: "is", expected: true, seen: true, source: "api", holds: true },
      { property: "reproduces_on_rerun", test: "is", expected: true, seen: true, source: "api", holds: true },
    ]);
  });

  it("refuses a disposition asserted from outside, naming the constraint", () => {
    const facts = factsFrom("api", { failing_stage: "test", disposition: "rerun_once" });
    let caught: unknown;
    try {
      evaluate(ciTriagePolicy, facts);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PolicyFactError);
    const refused = caught as PolicyFactError;
    expect(refused.constraint).toBe("provenance_refused");
    expect(refused.property).toBe("disposition");
    expect(refused.reason).toBe("provenance_refused");
    expect(refused.message).toBe("disposition is assigned by rules only; a value asserted by the API is refused");
    expect(refused.violations).toHaveLength(1);
  });

  it("refuses a rules-only fact whoever asserts it", () => {
    for (const source of ["webhook", "person", "api", "system"] as const) {
      expect(() => evaluate(ciTriagePolicy, factsFrom(source, { failing_stage: "lint", disposition: "fix_forward" }))).toThrow(
        /assigned by rules only/,
      );
    }
  });
});

describe("CI triage: what the checks found on the way to this policy", () => {
  const rerun = ruleNamed(ciTriagePolicy, "flaky_test_gets_one_rerun");
  const reproduced = ruleNamed(ciTriagePolicy, "flaky_failure_reproduced_escalates");
  const unguarded = variant(
    ciTriagePolicy.rules.map((rule) =>
      rule === rerun
        ? withoutGuard(rule, "reproduces_on_rerun", "isNot")
        : rule === reproduced
          ? withoutGuard(rule, "failing_stage", "isNot")
          : rule,
    ),
  );

  it("reports both overlaps before the guards were added, with the rule priority picks", () => {
    const conflicts = checkConflicts(unguarded);
    expect(conflicts.map((c) => ({ rules: c.rules, picked: c.picked, decidedBy: c.decidedBy }))).toEqual([
      {
        rules: ["deploy_failure_rolls_back", "flaky_failure_reproduced_escalates"],
        picked: "deploy_failure_rolls_back",
        decidedBy: "priority",
      },
      {
        rules: ["flaky_failure_reproduced_escalates", "flaky_test_gets_one_rerun"],
        picked: "flaky_failure_reproduced_escalates",
        decidedBy: "priority",
      },
    ]);
    for (const conflict of conflicts) {
      const facts = factsFrom("api", conflict.region.example);
      for (const name of conflict.rules) expect(conditionHolds(ruleNamed(unguarded, name).when, facts)).toBe(true);
      expect(evaluate(unguarded, facts).rule).toBe(conflict.picked);
    }
    // The intended overlap: a flaky test with no reruns yet that nonetheless reproduced.
    const intended = conflicts[1]!;
    expect(regionContains(intended.region, { failing_stage: "test", known_flaky: true, prior_reruns: 0, reproduces_on_rerun: true })).toBe(true);
  });

  it("reports no conflicts once the guards state what priority was deciding", () => {
    expect(checkConflicts(ciTriagePolicy)).toEqual([]);
  });

  it("names the unclassified regions before the completeness cover, and none after", () => {
    const cover = new Set(["unclassified_failure_escalates", "flaky_without_rerun_left_escalates"]);
    const uncovered = variant(ciTriagePolicy.rules.filter((rule) => !cover.has(rule.name)));
    const gaps = checkCompleteness(uncovered);
    expect(gaps.map((gap) => formatRegion(gap.region))).toEqual([
      "failing_stage ∈ {lint, test, build} and known_flaky = absent",
      "failing_stage ∈ {lint, build} and known_flaky = true and reproduces_on_rerun ∈ {false, absent}",
      "failing_stage = test and known_flaky = true and reproduces_on_rerun ∈ {false, absent} and prior_reruns ∈ {≥1, absent}",
    ]);
    for (const gap of gaps) {
      const decision = evaluate(uncovered, factsFrom("api", gap.region.example));
      expect(decision.rule).toBeNull();
      expect(decision.value).toBe("escalate_to_owner");
      expect(decision.proof.via).toBe("default");
    }
    expect(checkCompleteness(ciTriagePolicy)).toEqual([]);
  });

  it("has no rule that never changes the outcome", () => {
    expect(checkNonVacuity(ciTriagePolicy)).toEqual([]);
  });

  it("requires the failing stage, so the space has no stage-less region", () => {
    expect(() => evaluate(ciTriagePolicy, factsFrom("api", { known_flaky: false }))).toThrow(
      expect.objectContaining({ constraint: "cardinality", property: "failing_stage" }),
    );
  });
});
