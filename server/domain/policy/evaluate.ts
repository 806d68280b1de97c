import { AppError } from "@/server/errors";
import { compilePolicy, pickDecision } from "./compile";
import { policyDigest } from "./digest";
import type { PolicyDecision, PolicyRef } from "./decision";
import { type Facts } from "./facts";
import { assertFacts, checkFacts, type FactViolation } from "./fact-check";
import type { PolicyDefinition, Scalar } from "./model";

// Evaluation: the highest-priority matching rule decides; equal priorities go to the rule listed
// first in the definition (rule names are unique, so that order is total). No match means the
// property's fail-closed default, and the proof then shows every rule that did not match.

export type EvaluateOptions = {
  /** Which rules-only property to decide; optional when the policy decides only one. */
  property?: string;
  /** Recorded on the decision; the lead's storage knows the version, the engine does not. */
  version?: number;
  /** Recorded on the decision; pass `policyDigest(policy)` or a stored digest. */
  digest?: string;
};

function copyFacts(facts: Facts): Facts {
  const copy: Facts = {};
  for (const name in facts) {
    const fact = Object.hasOwn(facts, name) ? facts[name] : undefined;
    if (fact) copy[name] = { value: fact.value, source: fact.source };
  }
  return copy;
}

/**
 * Decides one rules-only property from `facts`. Throws PolicyFactError (constraint named, e.g.
 * `provenance_refused`) when the facts break the model; never decides on facts it refused.
 */
export function evaluate(policy: PolicyDefinition, facts: Facts, options: EvaluateOptions = {}): PolicyDecision {
  const compiled = compilePolicy(policy);
  const decided = pickDecision(compiled, options.property);
  assertFacts(policy, facts);

  const policyRef: PolicyRef = {
    kind: policy.kind,
    version: options.version ?? null,
    digest: options.digest ?? null,
  };
  const copied = copyFacts(facts);

  // Find the winner with plain boolean evaluation; build the proof once, for it alone.
  // (Object literals are spelled out: spreading a shared base object made V8 take a slow path
  // that cost most of a decision's time.)
  const winner = decided.rules.find((rule) => rule.test(facts));
  if (winner) {
    return {
      policy: policyRef,
      subject: policy.subject,
      property: decided.property.name,
      value: winner.then.value,
      rule: winner.name,
      explanation: winner.explanation,
      facts: copied,
      proof: {
        via: "rule",
        rule: winner.name,
        priority: winner.priority,
        explanation: winner.explanation,
        tree: winner.prove(facts),
      },
    };
  }
  const { fallback } = decided;
  return {
    policy: policyRef,
    subject: policy.subject,
    property: decided.property.name,
    value: fallback.value,
    rule: null,
    explanation: fallback.explanation,
    facts: copied,
    proof: {
      via: "default",
      explanation: fallback.explanation,
      unmatched: decided.rules.map((rule) => ({ rule: rule.name, priority: rule.priority, tree: rule.prove(facts) })),
    },
  };
}

/** Every property the policy decides, evaluated on the same facts. */
export function evaluateAll(
  policy: PolicyDefinition,
  facts: Facts,
  options: Omit<EvaluateOptions, "property"> = {},
): Record<string, PolicyDecision> {
  const compiled = compilePolicy(policy);
  const out: Record<string, PolicyDecision> = {};
  for (const property of compiled.decisions.keys()) {
    out[property] = evaluate(policy, facts, { ...options, property });
  }
  return out;
}

export type RecheckResult = {
  /** Same value from the same rule (or the default in both). */
  matches: boolean;
  stored: { value: Scalar; rule: string | null };
  /** The decision the given definition makes now, or null when it refuses the stored facts. */
  current: PolicyDecision | null;
  refused: FactViolation[];
  /** Whether the definition differs from the one the decision recorded; null if none was recorded. */
  policyChanged: boolean | null;
};

/** Re-evaluates a stored decision's facts against a definition and compares the outcome. */
export function recheck(
  stored: PolicyDecision,
  policy: PolicyDefinition,
  options: Omit<EvaluateOptions, "property"> = {},
): RecheckResult {
  if (stored.policy.kind !== policy.kind) {
    throw new AppError("BAD_REQUEST", `decision was made by policy ${stored.policy.kind}, not ${policy.kind}`, {
      reason: "policy_mismatch",
    });
  }
  const digest = options.digest ?? policyDigest(policy);
  const policyChanged = stored.policy.digest === null ? null : stored.policy.digest !== digest;
  const storedOutcome = { value: stored.value, rule: stored.rule };
  const refused = checkFacts(policy, stored.facts);
  if (refused.length > 0) return { matches: false, stored: storedOutcome, current: null, refused, policyChanged };

  const current = evaluate(policy, stored.facts, { property: stored.property, version: options.version, digest });
  const matches = current.value === stored.value && current.rule === stored.rule;
  return { matches, stored: storedOutcome, current, refused: [], policyChanged };
}
