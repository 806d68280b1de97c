import { AppError } from "@/server/errors";
import { compilePolicy } from "./compile";
import { describeSource, type Facts, zFactSource } from "./facts";
import type { PolicyDefinition } from "./model";
import { valueProblem } from "./validate";

// Checking facts against a policy's model needs the compiled policy, so it lives apart from the
// fact vocabulary (facts.ts), which conditions and proofs read without compiling anything.

const sources = new Set<string>(zFactSource.options);

export type FactConstraint =
  | "unknown_property"
  | "value_not_in_enum"
  | "wrong_type"
  | "out_of_bounds"
  | "provenance_refused"
  | "cardinality"
  | "unknown_source";

export type FactViolation = { constraint: FactConstraint; property: string; message: string };

export class PolicyFactError extends AppError {
  /** The first violated constraint; all of them are in `violations`. */
  readonly constraint: FactConstraint;
  readonly property: string;
  readonly violations: FactViolation[];

  constructor(policy: string, violations: [FactViolation, ...FactViolation[]]) {
    const [first] = violations;
    super("UNPROCESSABLE", first.message, {
      reason: first.constraint,
      details: { policy, violations },
    });
    this.name = "PolicyFactError";
    this.constraint = first.constraint;
    this.property = first.property;
    this.violations = violations;
  }
}

/** Every way `facts` break the policy's model; empty when they are acceptable. */
export function checkFacts(policy: PolicyDefinition, facts: Facts): FactViolation[] {
  const { properties, required } = compilePolicy(policy);
  const violations: FactViolation[] = [];
  for (const name in facts) {
    if (!Object.hasOwn(facts, name)) continue;
    const fact = facts[name]!;
    const property = properties.get(name);
    if (!property) {
      violations.push({
        constraint: "unknown_property",
        property: name,
        message: `${name} is not a property of ${policy.subject}`,
      });
      continue;
    }
    if (!sources.has(fact.source)) {
      violations.push({
        constraint: "unknown_source",
        property: name,
        message: `${name} was asserted by an unknown source ${JSON.stringify(fact.source)}`,
      });
    }
    if (property.rulesOnly) {
      violations.push({
        constraint: "provenance_refused",
        property: name,
        message: `${name} is assigned by rules only; a value asserted by ${describeSource(fact.source)} is refused`,
      });
      continue;
    }
    const problem = valueProblem(property, fact.value);
    if (problem) violations.push({ constraint: problem.constraint, property: name, message: problem.message });
  }
  for (const property of required) {
    if (!Object.hasOwn(facts, property.name)) {
      violations.push({
        constraint: "cardinality",
        property: property.name,
        message: `${property.name} is required (cardinality 1) but no fact was given`,
      });
    }
  }
  return violations;
}

/** Throws PolicyFactError naming the first violated constraint. */
export function assertFacts(policy: PolicyDefinition, facts: Facts): void {
  const violations = checkFacts(policy, facts);
  const [first, ...rest] = violations;
  if (first) throw new PolicyFactError(policy.kind, [first, ...rest]);
}
