import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePolicy } from "../compile";
import { conditionHolds, proveCondition } from "../conditions";
import { zPolicyDecision } from "../decision";
import { evaluate, recheck } from "../evaluate";
import { factsFrom, type Facts } from "../facts";
import type { Condition, PolicyDefinition, PolicyDefinitionInput } from "../model";
import { assignments, type Assignment } from "../testing/enumerate";
import { definePolicy } from "../validate";
import { checkCompleteness } from "./completeness";
import { checkConflicts } from "./conflicts";
import { checkNonVacuity } from "./non-vacuity";
import { regionContains } from "./region";

// The checks reason over cells and boxes; these properties hold them to brute force over every
// concrete fact assignment of small random policies, evaluated by the plain interpreter.

const stageValues = ["a", "b", "c"];
const branchNames = ["main", "dev"];

const leaf: fc.Arbitrary<Condition> = fc.oneof(
  fc.constantFrom(...stageValues).map((v) => ({ property: "stage", is: v })),
  fc.constantFrom(...stageValues).map((v) => ({ property: "stage", isNot: v })),
  fc.subarray(stageValues, { minLength: 1 }).map((vs) => ({ property: "stage", inList: vs })),
  fc.boolean().map((v) => ({ property: "flag", is: v })),
  fc.boolean().map((v) => ({ property: "flag", isNot: v })),
  fc.integer({ min: -1, max: 6 }).map((v) => ({ property: "count", below: v })),
  fc.integer({ min: -1, max: 6 }).map((v) => ({ property: "count", above: v })),
  fc.integer({ min: 0, max: 5 }).map((v) => ({ property: "count", is: v })),
  fc.integer({ min: 0, max: 5 }).map((v) => ({ property: "count", isNot: v })),
  fc.constantFrom(...branchNames).map((v) => ({ property: "branch", is: v })),
  fc.constantFrom(...branchNames).map((v) => ({ property: "branch", isNot: v })),
  fc.constantFrom("stage", "flag", "count", "branch").chain((property) =>
    fc.boolean().map((isEmpty) => ({ property, isEmpty })),
  ),
);

function condition(depth: number): fc.Arbitrary<Condition> {
  if (depth === 0) return leaf;
  const children = fc.array(condition(depth - 1), { minLength: 1, maxLength: 3 });
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 2, arbitrary: children.map((all) => ({ all })) },
    { weight: 1, arbitrary: children.map((any) => ({ any })) },
    { weight: 1, arbitrary: children.map((none) => ({ none })) },
  );
}

const smallPolicy: fc.Arbitrary<PolicyDefinition> = fc
  .record({
    stageRequired: fc.boolean(),
    countBounded: fc.boolean(),
    rules: fc.array(
      fc.record({
        priority: fc.integer({ min: 0, max: 2 }),
        when: condition(2),
        value: fc.constantFrom("x", "y", "z"),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  })
  .map(({ stageRequired, countBounded, rules }) => {
    const input: PolicyDefinitionInput = {
      kind: "random",
      name: "random policy",
      subject: "thing",
      properties: [
        { name: "stage", type: "enum", values: stageValues, cardinality: stageRequired ? "1" : "0..1" },
        { name: "flag", type: "boolean" },
        countBounded ? { name: "count", type: "integer", min: 0, max: 5 } : { name: "count", type: "integer" },
        { name: "branch", type: "string" },
        { name: "out", type: "enum", values: ["x", "y", "z"], rulesOnly: true },
      ],
      rules: rules.map((rule, i) => ({
        name: `rule_${i}`,
        priority: rule.priority,
        when: rule.when,
        then: { property: "out", value: rule.value },
        explanation: `rule ${i}`,
      })),
      defaults: [{ property: "out", value: "z", explanation: "nothing matched" }],
    };
    return definePolicy(input);
  });

type BruteForce = {
  points: { assignment: Assignment; matching: string[] }[];
  ranked: { name: string; value: unknown }[];
};

function bruteForce(policy: PolicyDefinition): BruteForce {
  const ranked = compilePolicy(policy).only!.rules;
  const points = [...assignments(policy)].map((assignment) => {
    const facts = factsFrom("api", assignment);
    return { assignment, matching: ranked.filter((rule) => conditionHolds(rule.when, facts)).map((r) => r.name) };
  });
  return { points, ranked: ranked.map((r) => ({ name: r.name, value: r.then.value })) };
}

const runs = { numRuns: 300 };

describe("checks agree with brute force over the whole fact space", () => {
  it("completeness: a fact set lies in exactly one reported gap when no rule matches it, else in none", () => {
    fc.assert(
      fc.property(smallPolicy, (policy) => {
        const gaps = checkCompleteness(policy);
        for (const { assignment, matching } of bruteForce(policy).points) {
          const containing = gaps.filter((gap) => regionContains(gap.region, assignment)).length;
          expect(containing, JSON.stringify(assignment)).toBe(matching.length === 0 ? 1 : 0);
        }
        for (const gap of gaps) expect(evaluate(policy, factsFrom("api", gap.region.example)).rule).toBeNull();
      }),
      runs,
    );
  });

  it("conflicts: exactly the pairs that match together with different conclusions", () => {
    fc.assert(
      fc.property(smallPolicy, (policy) => {
        const { points, ranked } = bruteForce(policy);
        const valueOf = new Map(ranked.map((r) => [r.name, r.value]));
        const expected = new Set<string>();
        for (const { matching } of points) {
          matching.forEach((a, i) => {
            for (const b of matching.slice(i + 1)) if (valueOf.get(a) !== valueOf.get(b)) expected.add(`${a}>${b}`);
          });
        }
        const conflicts = checkConflicts(policy);
        expect(new Set(conflicts.map((c) => c.rules.join(">")))).toEqual(expected);
        const rank = (name: string | null) => ranked.findIndex((r) => r.name === name);
        for (const conflict of conflicts) {
          const facts = factsFrom("api", conflict.region.example);
          expect(conflict.picked).toBe(conflict.rules[0]);
          expect(rank(conflict.rules[0])).toBeLessThan(rank(conflict.rules[1]));
          // A third rule ahead of both may decide the example; the pair's loser never does.
          const decided = evaluate(policy, facts).rule;
          expect(rank(decided)).toBeLessThanOrEqual(rank(conflict.picked));
          for (const name of conflict.rules) {
            const rule = policy.rules.find((r) => r.name === name)!;
            expect(conditionHolds(rule.when, facts)).toBe(true);
          }
        }
      }),
      runs,
    );
  });

  it("non-vacuity: exactly the rules that never decide, with who decides instead", () => {
    fc.assert(
      fc.property(smallPolicy, (policy) => {
        const { points, ranked } = bruteForce(policy);
        const expected = ranked.flatMap(({ name, value }) => {
          const where = points.filter((p) => p.matching.includes(name));
          if (where.some((p) => p.matching[0] === name)) return [];
          if (where.length === 0) return [{ rule: name, reason: "never_matches", overriddenBy: [] as string[] }];
          const winners = new Set(where.map((p) => p.matching[0]!));
          const same = [...winners].every((w) => ranked.find((r) => r.name === w)?.value === value);
          return [
            {
              rule: name,
              reason: same ? "redundant" : "overridden",
              overriddenBy: ranked.map((r) => r.name).filter((n) => winners.has(n)),
            },
          ];
        });
        const vacuous = checkNonVacuity(policy).map(({ rule, reason, overriddenBy }) => ({ rule, reason, overriddenBy }));
        expect(vacuous).toEqual(expected);
      }),
      runs,
    );
  });
});

describe("evaluation", () => {
  const withFacts = smallPolicy.chain((policy) =>
    fc.constantFrom(...assignments(policy)).map((assignment) => ({ policy, assignment })),
  );

  it("is deterministic and independent of the order facts are listed in", () => {
    fc.assert(
      fc.property(withFacts, ({ policy, assignment }) => {
        const facts = factsFrom("person", assignment);
        const reversed: Facts = Object.fromEntries(Object.entries(facts).reverse());
        const first = evaluate(policy, facts);
        expect(evaluate(policy, facts)).toEqual(first);
        expect(evaluate(policy, reversed)).toEqual(first);
      }),
      runs,
    );
  });

  it("picks the first matching rule in winning order, and proves it", () => {
    fc.assert(
      fc.property(withFacts, ({ policy, assignment }) => {
        const facts = factsFrom("api", assignment);
        const winner = compilePolicy(policy).only!.rules.find((rule) => conditionHolds(rule.when, facts));
        const decision = evaluate(policy, facts);
        expect(decision.rule).toBe(winner?.name ?? null);
        // The compiled proof builder must agree with the reference interpreter, leaf for leaf.
        if (decision.proof.via === "rule") {
          expect(decision.proof.tree.holds).toBe(true);
          expect(decision.proof.tree).toEqual(proveCondition(winner!.when, facts));
        } else {
          expect(decision.proof.unmatched.every((u) => !u.tree.holds)).toBe(true);
          const ranked = compilePolicy(policy).only!.rules;
          expect(decision.proof.unmatched.map((u) => u.tree)).toEqual(ranked.map((r) => proveCondition(r.when, facts)));
        }
      }),
      runs,
    );
  });

  it("re-checking a stored decision gives the same result", () => {
    fc.assert(
      fc.property(withFacts, ({ policy, assignment }) => {
        const decision = evaluate(policy, factsFrom("webhook", assignment), { version: 3, digest: "sha256:abc" });
        const stored = zPolicyDecision.parse(JSON.parse(JSON.stringify(decision)));
        const result = recheck(stored, policy, { version: 3, digest: "sha256:abc" });
        expect(result.matches).toBe(true);
        expect(result.policyChanged).toBe(false);
        expect(result.current).toEqual(decision);
      }),
      runs,
    );
  });
});
