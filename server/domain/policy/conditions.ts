import { factOf, type Facts } from "./facts";
import {
  groupParts,
  isGroup,
  leafParts,
  type Condition,
  type LeafCondition,
  type LeafParts,
  type Scalar,
} from "./model";
import type { ProofNode } from "./proof";

// Condition semantics over concrete facts. An absent fact is read under the closed world: it is
// not any value, so `isNot` and `isEmpty: true` hold, and every positive test fails.

export function leafHolds(parts: LeafParts, value: Scalar | undefined): boolean {
  switch (parts.test) {
    case "is":
      return value !== undefined && value === parts.expected;
    case "isNot":
      return value === undefined || value !== parts.expected;
    case "inList":
      return value !== undefined && parts.expected.includes(value);
    case "below":
      return typeof value === "number" && value < parts.expected;
    case "above":
      return typeof value === "number" && value > parts.expected;
    case "isEmpty":
      return (value === undefined) === parts.expected;
  }
}

/** Fast boolean evaluation, no proof. Used to find the winning rule. */
export function conditionHolds(condition: Condition, facts: Facts): boolean {
  if (!isGroup(condition)) {
    return leafHolds(leafParts(condition), factOf(facts, condition.property)?.value);
  }
  if ("all" in condition) return condition.all.every((child) => conditionHolds(child, facts));
  if ("any" in condition) return condition.any.some((child) => conditionHolds(child, facts));
  return !condition.none.some((child) => conditionHolds(child, facts));
}

export type CompiledCondition = {
  test: (facts: Facts) => boolean;
  prove: (facts: Facts) => ProofNode;
};

function leafTest(parts: LeafParts, property: string): (facts: Facts) => boolean {
  const value = (facts: Facts) => factOf(facts, property)?.value;
  switch (parts.test) {
    case "is": {
      const expected = parts.expected;
      return (facts) => value(facts) === expected;
    }
    case "isNot": {
      const expected = parts.expected;
      return (facts) => value(facts) !== expected;
    }
    case "inList": {
      const expected = new Set<Scalar>(parts.expected);
      return (facts) => {
        const seen = value(facts);
        return seen !== undefined && expected.has(seen);
      };
    }
    default:
      return (facts) => leafHolds(parts, value(facts));
  }
}

/**
 * The semantics of conditionHolds and proveCondition, as closures built once per rule, so a
 * decision does no per-call inspection of the condition's shape. Tests check the two agree.
 */
export function compileCondition(condition: Condition): CompiledCondition {
  if (isGroup(condition)) {
    const { kind, children } = groupParts(condition);
    const compiled = children.map(compileCondition);
    const tests = compiled.map((child) => child.test);
    const test =
      kind === "all"
        ? (facts: Facts) => tests.every((t) => t(facts))
        : kind === "any"
          ? (facts: Facts) => tests.some((t) => t(facts))
          : (facts: Facts) => !tests.some((t) => t(facts));
    const prove = (facts: Facts): ProofNode => {
      const proved = compiled.map((child) => child.prove(facts));
      const holds =
        kind === "all"
          ? proved.every((node) => node.holds)
          : kind === "any"
            ? proved.some((node) => node.holds)
            : !proved.some((node) => node.holds);
      return { kind, holds, children: proved };
    };
    return { test, prove };
  }
  const { property } = condition;
  const parts = leafParts(condition);
  const test = leafTest(parts, property);
  // A proof is stored and shipped on its own, so it must not share arrays with the definition.
  const expected = parts.expected;
  const prove = (facts: Facts): ProofNode => {
    const fact = factOf(facts, property);
    return {
      kind: "leaf",
      holds: test(facts),
      property,
      test: parts.test,
      expected: Array.isArray(expected) ? [...expected] : expected,
      seen: fact ? fact.value : null,
      source: fact ? fact.source : "closed_world",
    };
  };
  return { test, prove };
}

/** Evaluates every branch (no short circuit) so the proof shows each condition's fact. */
export function proveCondition(condition: Condition, facts: Facts): ProofNode {
  if (!isGroup(condition)) {
    const parts = leafParts(condition);
    const fact = factOf(facts, condition.property);
    return {
      kind: "leaf",
      holds: leafHolds(parts, fact?.value),
      property: condition.property,
      test: parts.test,
      expected: Array.isArray(parts.expected) ? [...parts.expected] : parts.expected,
      seen: fact ? fact.value : null,
      source: fact ? fact.source : "closed_world",
    };
  }
  const { kind, children } = groupParts(condition);
  const proved = children.map((child) => proveCondition(child, facts));
  const holds =
    kind === "all"
      ? proved.every((node) => node.holds)
      : kind === "any"
        ? proved.some((node) => node.holds)
        : !proved.some((node) => node.holds);
  return { kind, holds, children: proved };
}

export function forEachLeaf(condition: Condition, visit: (leaf: LeafCondition) => void): void {
  if (!isGroup(condition)) {
    visit(condition);
    return;
  }
  for (const child of groupParts(condition).children) forEachLeaf(child, visit);
}
