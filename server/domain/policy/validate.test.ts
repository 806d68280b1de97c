import { describe, expect, it } from "vitest";
import type { PolicyDefinitionInput, Rule } from "./model";
import { definePolicy, parsePolicy, PolicyDefinitionError, validatePolicy, type PolicyIssue } from "./validate";

const base: PolicyDefinitionInput = {
  kind: "sample",
  name: "Sample",
  subject: "build_failure",
  properties: [
    { name: "stage", type: "enum", values: ["lint", "test"] },
    { name: "flaky", type: "boolean" },
    { name: "reruns", type: "integer", min: 0, max: 3 },
    { name: "branch", type: "string" },
    { name: "verdict", type: "enum", values: ["retry", "escalate"], rulesOnly: true },
  ],
  rules: [],
  defaults: [{ property: "verdict", value: "escalate", explanation: "a person decides" }],
};

function rule(overrides: Partial<Rule>): Rule {
  return {
    name: "retry_flaky",
    priority: 1,
    when: { property: "flaky", is: true },
    then: { property: "verdict", value: "retry" },
    explanation: "flaky tests get a retry",
    ...overrides,
  };
}

function issuesFor(input: PolicyDefinitionInput): PolicyIssue[] {
  try {
    parsePolicy(input);
  } catch (error) {
    if (error instanceof PolicyDefinitionError) return error.issues;
    throw error;
  }
  return [];
}

describe("policy validation", () => {
  it("accepts a consistent definition and fills in defaults", () => {
    const policy = definePolicy({ ...base, rules: [rule({})] });
    expect(policy.properties[0]).toMatchObject({ cardinality: "0..1", rulesOnly: false });
    expect(validatePolicy(policy)).toEqual([]);
    expect(Object.isFrozen(policy.rules[0])).toBe(true);
  });

  it.each([
    ["unknown_property", rule({ when: { property: "colour", is: "red" } })],
    ["value_not_in_enum", rule({ when: { property: "stage", is: "deploy" } })],
    ["value_not_in_enum", rule({ when: { property: "stage", inList: ["lint", "deploy"] } })],
    ["wrong_type", rule({ when: { property: "flaky", is: "yes" } })],
    ["wrong_type", rule({ when: { property: "branch", isNot: 3 } })],
    ["out_of_bounds", rule({ when: { property: "reruns", is: 9 } })],
    ["comparison_needs_integer", rule({ when: { property: "stage", below: 2 } })],
    ["condition_on_rules_only", rule({ when: { property: "verdict", is: "retry" } })],
    ["conclusion_not_rules_only", rule({ then: { property: "flaky", value: true } })],
    ["value_not_in_enum", rule({ then: { property: "verdict", value: "ignore" } })],
    ["unknown_property", rule({ then: { property: "outcome", value: "retry" } })],
    ["unknown_property", rule({ when: { all: [{ property: "flaky", is: true }, { none: [{ property: "age", above: 3 }] }] } })],
  ] as const)("reports %s, naming the rule", (constraint, bad) => {
    const issues = issuesFor({ ...base, rules: [bad] });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ constraint, rule: "retry_flaky" });
    expect(issues[0]?.message).toMatch(new RegExp(`^rule retry_flaky: .*\\[${constraint}\\]$`));
  });

  it("points at the offending condition inside nested groups", () => {
    const issues = issuesFor({
      ...base,
      rules: [rule({ when: { all: [{ property: "flaky", is: true }, { none: [{ property: "stage", is: "deploy" }] }] } })],
    });
    expect(issues[0]?.path).toEqual(["rules", 0, "when", "all", 1, "none", 0]);
  });

  it("reports duplicate rule names and properties", () => {
    expect(issuesFor({ ...base, rules: [rule({}), rule({ priority: 2 })] }).map((i) => i.constraint)).toEqual([
      "duplicate_rule",
    ]);
    const properties = [...base.properties, { name: "flaky", type: "boolean" as const }];
    expect(issuesFor({ ...base, properties }).map((i) => i.constraint)).toEqual(["duplicate_property"]);
  });

  it("requires one valid fail-closed default per rules-only property", () => {
    expect(issuesFor({ ...base, defaults: [] }).map((i) => i.constraint)).toEqual(["schema"]);
    const twoDecisions = [...base.properties, { name: "urgent", type: "boolean" as const, rulesOnly: true }];
    expect(issuesFor({ ...base, properties: twoDecisions }).map((i) => i.constraint)).toEqual(["missing_default"]);
    expect(
      issuesFor({ ...base, defaults: [{ property: "flaky", value: true, explanation: "x" }] }).map((i) => i.constraint),
    ).toEqual(["default_not_rules_only", "missing_default"]);
    expect(
      issuesFor({ ...base, defaults: [{ property: "verdict", value: "maybe", explanation: "x" }] }).map((i) => i.constraint),
    ).toEqual(["value_not_in_enum"]);
  });

  it("rejects malformed shapes with schema issues", () => {
    const issues = issuesFor({ ...base, rules: [rule({ explanation: "two\nlines" })] });
    expect(issues.map((i) => i.constraint)).toEqual(["schema"]);
    expect(issuesFor({ ...base, kind: "Not Snake" }).map((i) => i.path)).toEqual([["kind"]]);
    expect(() => parsePolicy({ ...base, rules: [{ ...rule({}), when: { all: [] } }] })).toThrow(PolicyDefinitionError);
    expect(() => parsePolicy({ ...base, rules: [{ ...rule({}), when: { property: "flaky", is: true, isNot: false } }] })).toThrow(
      PolicyDefinitionError,
    );
  });

  it("rejects inverted integer bounds", () => {
    const properties = base.properties.map((p) => (p.name === "reruns" ? { ...p, min: 5, max: 1 } : p));
    expect(issuesFor({ ...base, properties }).map((i) => i.constraint)).toEqual(["bounds_inverted"]);
  });
});
