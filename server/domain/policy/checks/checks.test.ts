import { describe, expect, it } from "vitest";
import { AppError } from "@/server/errors";
import { evaluate } from "../evaluate";
import { factsFrom } from "../facts";
import type { PolicyDefinitionInput, Rule } from "../model";
import { runnerSelectionPolicy } from "../shipped/runner-selection";
import { definePolicy } from "../validate";
import { checkPolicy } from "./check-policy";
import { checkCompleteness } from "./completeness";
import { checkConflicts } from "./conflicts";
import { checkNonVacuity, ruleCoverage } from "./non-vacuity";
import { formatRegion } from "./region";

const base: PolicyDefinitionInput = {
  kind: "sample",
  name: "Sample",
  subject: "job",
  properties: [
    { name: "stage", type: "enum", values: ["lint", "test", "deploy"] },
    { name: "flaky", type: "boolean" },
    { name: "reruns", type: "integer", min: 0 },
    { name: "minutes", type: "integer" },
    { name: "branch", type: "string" },
    { name: "verdict", type: "enum", values: ["retry", "fix", "escalate"], rulesOnly: true },
  ],
  rules: [],
  defaults: [{ property: "verdict", value: "escalate", explanation: "a person decides" }],
};

let counter = 0;
function rule(when: Rule["when"], value: string, priority = 1, name = `rule_${counter++}`): Rule {
  return { name, priority, when, then: { property: "verdict", value }, explanation: `concludes ${value}` };
}

function policyOf(...rules: Rule[]) {
  return definePolicy({ ...base, rules });
}

describe("completeness", () => {
  it("cuts integers at the rules' thresholds", () => {
    const policy = policyOf(rule({ property: "minutes", below: 3 }, "fix"), rule({ property: "minutes", above: 7 }, "retry"));
    const gaps = checkCompleteness(policy);
    expect(gaps.map((g) => formatRegion(g.region))).toEqual(["minutes ∈ {3..7, absent}"]);
    expect(gaps[0]?.fallback).toEqual({ value: "escalate", explanation: "a person decides" });
    expect(gaps[0]?.region.example).toEqual({ minutes: 3 });
  });

  it("respects integer bounds: nothing lies below the minimum", () => {
    const policy = policyOf(rule({ property: "reruns", below: 1 }, "retry"), rule({ property: "reruns", isEmpty: true }, "fix"));
    expect(checkCompleteness(policy).map((g) => formatRegion(g.region))).toEqual(["reruns = ≥1"]);
  });

  it("treats strings the rules do not name as one 'other' cell", () => {
    const policy = policyOf(rule({ property: "branch", is: "main" }, "fix"));
    const [gap] = checkCompleteness(policy);
    expect(formatRegion(gap!.region)).toBe("branch ∈ {other, absent}");
    expect(gap!.region.example).toEqual({ branch: "other" });
    expect(evaluate(policy, factsFrom("api", gap!.region.example)).rule).toBeNull();
  });

  it("finds nothing missing when a rule always matches", () => {
    const policy = policyOf(rule({ any: [{ property: "flaky", isEmpty: true }, { property: "flaky", isEmpty: false }] }, "fix"));
    expect(checkCompleteness(policy)).toEqual([]);
  });

  it("reports the whole space as one gap when there are no rules", () => {
    const policy = policyOf();
    expect(checkCompleteness(policy).map((g) => formatRegion(g.region))).toEqual(["every fact set"]);
  });
});

describe("conflicts", () => {
  it("names the pair, the region and the rule that wins there", () => {
    const policy = policyOf(
      rule({ property: "stage", inList: ["lint", "test"] }, "fix", 1, "fix_code"),
      rule({ all: [{ property: "flaky", is: true }, { property: "stage", isNot: "lint" }] }, "retry", 2, "retry_flaky"),
    );
    const conflicts = checkConflicts(policy);
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({
      property: "verdict",
      rules: ["retry_flaky", "fix_code"],
      conclusions: ["retry", "fix"],
      picked: "retry_flaky",
      decidedBy: "priority",
    });
    expect(formatRegion(conflicts[0]!.region)).toBe("stage = test and flaky = true");
  });

  it("says when listing order, not priority, settles a tie", () => {
    const policy = policyOf(rule({ property: "flaky", is: true }, "retry", 3, "first"), rule({ property: "flaky", isNot: false }, "fix", 3, "second"));
    expect(checkConflicts(policy).map((c) => [c.picked, c.decidedBy])).toEqual([["first", "order"]]);
  });

  it("ignores overlaps that agree, and rules that cannot meet", () => {
    const policy = policyOf(
      rule({ property: "flaky", is: true }, "retry", 1, "flaky_retries"),
      rule({ property: "stage", is: "test" }, "retry", 1, "test_retries"),
      rule({ property: "flaky", is: false }, "fix", 1, "solid_fixes"),
    );
    const conflicts = checkConflicts(policy);
    expect(conflicts.map((c) => c.rules)).toEqual([["test_retries", "solid_fixes"]]);
    expect(conflicts[0]?.conclusions).toEqual(["retry", "fix"]);
  });
});

describe("non-vacuity", () => {
  it("flags a rule whose condition is contradictory, and one outside the bounds", () => {
    const policy = policyOf(
      rule({ all: [{ property: "flaky", is: true }, { property: "flaky", is: false }] }, "fix", 1, "contradiction"),
      rule({ property: "reruns", below: 0 }, "fix", 1, "negative_reruns"),
      rule({ property: "flaky", is: true }, "retry", 1, "alive"),
    );
    expect(checkNonVacuity(policy)).toEqual([
      { property: "verdict", rule: "contradiction", reason: "never_matches", overriddenBy: [] },
      { property: "verdict", rule: "negative_reruns", reason: "never_matches", overriddenBy: [] },
    ]);
  });

  it("tells a restating rule from an overridden one", () => {
    const policy = policyOf(
      rule({ property: "stage", is: "test" }, "retry", 9, "test_retries"),
      rule({ property: "stage", is: "lint" }, "fix", 9, "lint_fixes"),
      rule({ all: [{ property: "stage", is: "test" }, { property: "flaky", is: true }] }, "retry", 1, "flaky_test_retries"),
      rule({ property: "stage", inList: ["test", "lint"] }, "escalate", 1, "code_escalates"),
      rule({ property: "stage", inList: ["lint", "deploy"] }, "fix", 1, "still_useful"),
    );
    expect(checkNonVacuity(policy)).toEqual([
      { property: "verdict", rule: "flaky_test_retries", reason: "redundant", overriddenBy: ["test_retries"] },
      { property: "verdict", rule: "code_escalates", reason: "overridden", overriddenBy: ["test_retries", "lint_fixes"] },
    ]);
    const coverage = ruleCoverage(policy);
    expect(coverage.find((c) => c.rule === "still_useful")?.wins?.where).toEqual([
      { property: "stage", cells: [{ kind: "value", value: "deploy", label: "deploy" }] },
    ]);
    expect(coverage.find((c) => c.rule === "code_escalates")?.wins).toBeNull();
  });
});

describe("policies that decide several properties", () => {
  it("checks each decided property on its own, or the one asked for", () => {
    const report = checkPolicy(runnerSelectionPolicy, { property: "privileged_credentials" });
    expect(report).toEqual({ conflicts: [], gaps: [], vacuous: [] });
    const withoutTrusted = definePolicy({
      ...runnerSelectionPolicy,
      rules: runnerSelectionPolicy.rules.filter((r) => r.name !== "trusted_ref_runs_trusted"),
    });
    const gaps = checkCompleteness(withoutTrusted);
    expect(gaps.map((g) => [g.property, formatRegion(g.region)])).toEqual([
      ["pool_trust_tier", "is_fork = false and ref_trusted = true"],
    ]);
    expect(() => checkConflicts(runnerSelectionPolicy, { property: "is_fork" })).toThrow(AppError);
  });
});

describe("wide properties", () => {
  it("handles an enum with more cells than one mask word holds", () => {
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const policy = definePolicy({
      ...base,
      properties: [...base.properties, { name: "repo", type: "enum", values }],
      rules: [
        rule({ property: "repo", inList: ["v1", "v33", "v39"] }, "fix", 1, "listed_fix"),
        rule({ all: [{ property: "repo", is: "v33" }, { property: "flaky", is: true }] }, "retry", 2, "v33_retries"),
        rule({ none: [{ property: "repo", inList: values.slice(0, 35) }] }, "escalate", 3, "tail_escalates"),
      ],
    });
    expect(checkConflicts(policy).map((c) => c.rules)).toEqual([
      ["tail_escalates", "listed_fix"],
      ["v33_retries", "listed_fix"],
    ]);
    expect(checkConflicts(policy)[0]?.region.example).toEqual({ repo: "v39" });
    const gaps = checkCompleteness(policy);
    const uncovered = values.filter((v) => !["v1", "v33", "v39"].includes(v) && values.indexOf(v) < 35);
    expect(gaps.map((g) => formatRegion(g.region))).toEqual([`repo ∈ {${uncovered.join(", ")}}`]);
    expect(checkNonVacuity(policy)).toEqual([]);
  });
});
