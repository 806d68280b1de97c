import { describe, expect, it } from "vitest";
import { AppError } from "@/server/errors";
import { proveCondition } from "./conditions";
import { canonicalJson, policyDigest } from "./digest";
import { zPolicyDecision } from "./decision";
import { evaluate, recheck } from "./evaluate";
import { factsFrom, zFacts, type Facts } from "./facts";
import { checkFacts, PolicyFactError } from "./fact-check";
import type { PolicyDefinitionInput, Rule } from "./model";
import { renderDecision } from "./render";
import { ciTriagePolicy } from "./shipped/ci-triage";
import { definePolicy } from "./validate";

const input: PolicyDefinitionInput = {
  kind: "sample",
  name: "Sample",
  subject: "job",
  properties: [
    { name: "stage", type: "enum", values: ["lint", "test", "deploy"], cardinality: "1" },
    { name: "flaky", type: "boolean" },
    { name: "reruns", type: "integer", min: 0, max: 10 },
    { name: "branch", type: "string" },
    { name: "constructor", type: "boolean" },
    { name: "verdict", type: "enum", values: ["retry", "fix", "escalate"], rulesOnly: true },
  ],
  rules: [
    {
      name: "retry_flaky_first",
      priority: 5,
      when: { all: [{ property: "flaky", is: true }, { property: "reruns", below: 2 }] },
      then: { property: "verdict", value: "retry" },
      explanation: "flaky with reruns left",
    },
    {
      name: "fix_on_main",
      priority: 5,
      when: { all: [{ property: "branch", is: "main" }, { property: "stage", inList: ["lint", "test"] }] },
      then: { property: "verdict", value: "fix" },
      explanation: "main branch failures are fixed",
    },
    {
      name: "escalate_many_reruns",
      priority: 9,
      when: { any: [{ property: "reruns", above: 4 }, { property: "constructor", is: true }] },
      then: { property: "verdict", value: "escalate" },
      explanation: "too many reruns",
    },
  ],
  defaults: [{ property: "verdict", value: "escalate", explanation: "nothing matched; a person decides" }],
};
const policy = definePolicy(input);

describe("evaluate", () => {
  it("breaks equal priorities by listing order, and priority beats order", () => {
    const both = factsFrom("api", { stage: "test", flaky: true, reruns: 0, branch: "main" });
    expect(evaluate(policy, both).rule).toBe("retry_flaky_first");
    const swapped = definePolicy({ ...input, rules: [input.rules[1]!, input.rules[0]!, input.rules[2]!] });
    expect(evaluate(swapped, both).rule).toBe("fix_on_main");
    const higher = factsFrom("api", { stage: "test", flaky: true, reruns: 5, branch: "main" });
    expect(evaluate(policy, higher).rule).toBe("escalate_many_reruns");
  });

  it("falls back to the default and proves that no rule matched", () => {
    const decision = evaluate(policy, factsFrom("webhook", { stage: "deploy", branch: "release" }));
    expect(decision).toMatchObject({ value: "escalate", rule: null, explanation: "nothing matched; a person decides" });
    if (decision.proof.via !== "default") throw new Error("expected the default");
    expect(decision.proof.unmatched.map((u) => u.rule)).toEqual(["escalate_many_reruns", "retry_flaky_first", "fix_on_main"]);
    expect(decision.proof.unmatched.every((u) => u.tree.holds === false)).toBe(true);
    expect(decision.proof.unmatched[1]?.tree).toEqual({
      kind: "all",
      holds: false,
      children: [
        { kind: "leaf", holds: false, property: "flaky", test: "is", expected: true, seen: null, source: "closed_world" },
        { kind: "leaf", holds: false, property: "reruns", test: "below", expected: 2, seen: null, source: "closed_world" },
      ],
    });
    expect(renderDecision(decision)).toContain("verdict = escalate   by default: nothing matched; a person decides");
  });

  it("treats a property named like an Object method as an ordinary fact", () => {
    expect(evaluate(policy, factsFrom("api", { stage: "lint" })).rule).toBeNull();
    expect(evaluate(policy, factsFrom("api", { stage: "lint", constructor: true })).rule).toBe("escalate_many_reruns");
  });

  it("builds the same proof as the reference interpreter", () => {
    const facts = factsFrom("person", { stage: "test", flaky: true, reruns: 1 });
    const decision = evaluate(policy, facts);
    if (decision.proof.via !== "rule") throw new Error("expected a rule");
    expect(decision.proof.tree).toEqual(proveCondition(input.rules[0]!.when, facts));
  });

  it("records the policy version and digest it was given", () => {
    const digest = policyDigest(policy);
    const decision = evaluate(policy, factsFrom("api", { stage: "lint" }), { version: 4, digest });
    expect(decision.policy).toEqual({ kind: "sample", version: 4, digest });
    expect(evaluate(policy, factsFrom("api", { stage: "lint" })).policy).toEqual({ kind: "sample", version: null, digest: null });
  });

  it("copies the facts it decided on", () => {
    const facts = factsFrom("api", { stage: "lint", flaky: true, reruns: 0 });
    const decision = evaluate(policy, facts);
    facts.flaky = { value: false, source: "api" };
    expect(decision.facts.flaky).toEqual({ value: true, source: "api" });
  });
});

describe("fact refusals", () => {
  it.each([
    ["unknown_property", { stage: "lint", colour: "red" }],
    ["value_not_in_enum", { stage: "build" }],
    ["wrong_type", { stage: "lint", flaky: "yes" }],
    ["wrong_type", { stage: "lint", reruns: 1.5 }],
    ["wrong_type", { stage: "lint", branch: 7 }],
    ["out_of_bounds", { stage: "lint", reruns: 11 }],
    ["out_of_bounds", { stage: "lint", reruns: -1 }],
    ["cardinality", { flaky: true }],
    ["provenance_refused", { stage: "lint", verdict: "fix" }],
  ] as const)("refuses %s", (constraint, values) => {
    const facts = factsFrom("api", values);
    expect(() => evaluate(policy, facts)).toThrow(PolicyFactError);
    expect(() => evaluate(policy, facts)).toThrow(expect.objectContaining({ constraint, code: "UNPROCESSABLE" }));
  });

  it("lists every violation, not just the first", () => {
    const violations = checkFacts(policy, factsFrom("api", { colour: "red", verdict: "fix", reruns: 99 }));
    expect(violations.map((v) => [v.constraint, v.property])).toEqual([
      ["unknown_property", "colour"],
      ["provenance_refused", "verdict"],
      ["out_of_bounds", "reruns"],
      ["cardinality", "stage"],
    ]);
  });

  it("parses facts from JSON and rejects unknown sources", () => {
    expect(zFacts.safeParse({ stage: { value: "lint", source: "rumour" } }).success).toBe(false);
    const smuggled = { stage: { value: "lint", source: "rumour" } } as unknown as Facts;
    expect(checkFacts(policy, smuggled).map((v) => v.constraint)).toEqual(["unknown_source"]);
  });
});

describe("recheck", () => {
  const facts = factsFrom("api", { stage: "test", flaky: true, reruns: 1, branch: "main" });
  const stored = zPolicyDecision.parse(
    JSON.parse(JSON.stringify(evaluate(policy, facts, { version: 1, digest: policyDigest(policy) }))),
  );

  it("matches against the same definition", () => {
    const result = recheck(stored, policy);
    expect(result).toMatchObject({ matches: true, policyChanged: false, refused: [] });
    expect(result.current?.proof).toEqual(stored.proof);
  });

  it("reports a different outcome when a new version reorders the rules", () => {
    const rules: Rule[] = policy.rules.map((r) => (r.name === "fix_on_main" ? { ...r, priority: 6 } : r));
    const next = definePolicy({ ...input, rules });
    const result = recheck(stored, next, { version: 2 });
    expect(result).toMatchObject({ matches: false, policyChanged: true, stored: { value: "retry", rule: "retry_flaky_first" } });
    expect(result.current).toMatchObject({ value: "fix", rule: "fix_on_main", policy: { version: 2 } });
  });

  it("reports facts the new definition refuses instead of deciding on them", () => {
    const narrower = definePolicy({
      ...input,
      properties: input.properties.map((p) => (p.name === "reruns" ? { ...p, max: 0 } : p)),
      rules: input.rules.map((r) => (r.name === "escalate_many_reruns" ? { ...r, when: { property: "constructor", is: true } } : r)),
    });
    const result = recheck(stored, narrower);
    expect(result.matches).toBe(false);
    expect(result.current).toBeNull();
    expect(result.refused.map((v) => v.constraint)).toEqual(["out_of_bounds"]);
  });

  it("refuses to recheck against a different policy", () => {
    expect(() => recheck(stored, ciTriagePolicy)).toThrow(AppError);
  });
});

describe("policyDigest", () => {
  it("is stable under key order and changes with content", () => {
    const reordered = definePolicy(JSON.parse(canonicalJson(input)) as PolicyDefinitionInput);
    expect(policyDigest(reordered)).toBe(policyDigest(policy));
    expect(policyDigest(policy)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(policyDigest(definePolicy({ ...input, name: "Other" }))).not.toBe(policyDigest(policy));
  });
});

describe("renderDecision", () => {
  it("renders the seed's first decision as a readable tree", () => {
    const decision = evaluate(ciTriagePolicy, factsFrom("api", { failing_stage: "test", known_flaky: true, prior_reruns: 0 }));
    expect(renderDecision(decision).split("\n")).toEqual([
      "disposition = rerun_once   via flaky_test_gets_one_rerun: The test is on the flaky list and has not been rerun yet, so it gets exactly one rerun.",
      "├─ reproduces_on_rerun isNot true  (absent: closed world)",
      "├─ failing_stage test is test  (asserted by the API)",
      "├─ known_flaky true is true  (asserted by the API)",
      "└─ prior_reruns 0 below 1  (asserted by the API)",
    ]);
  });
});
