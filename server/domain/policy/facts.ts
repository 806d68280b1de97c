import { z } from "zod";
import { AppError } from "@/server/errors";
import { compilePolicy } from "./compile";
import { zPolicyName, zScalar, type PolicyDefinition, type Scalar } from "./model";
import { valueProblem } from "./validate";

// Facts are what the outside world tells a policy, each with where it came from. A policy
// refuses facts its model does not allow rather than guessing, and refuses any attempt to assert
// a rules-only property: those are decided, never told.

export const zFactSource = z.enum(["webhook", "person", "api", "system"]);
export type FactSource = z.infer<typeof zFactSource>;

export const zFact = z.strictObject({ value: zScalar, source: zFactSource });
export type Fact = z.infer<typeof zFact>;

/** Property name -> fact. An absent key is an absent fact (closed world). */
export const MAX_FACTS = 100;
export const zFacts = z
  .record(zPolicyName, zFact)
  .refine((facts) => Object.keys(facts).length <= MAX_FACTS, `At most ${MAX_FACTS} facts`)
  .meta({ maxProperties: MAX_FACTS });
export type Facts = z.infer<typeof zFacts>;

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

const sources = new Set<string>(zFactSource.options);

const sourceNames: Record<FactSource, string> = {
  webhook: "a webhook",
  person: "a person",
  api: "the API",
  system: "the system",
};

/** "asserted by the API", "asserted by a person": for messages and rendered proofs. */
export function describeSource(source: FactSource): string {
  return sourceNames[source] ?? `an unknown source (${String(source)})`;
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

/** The fact for a property; own keys only, so a property named like an Object method is safe. */
export function factOf(facts: Facts, property: string): Fact | undefined {
  return Object.hasOwn(facts, property) ? facts[property] : undefined;
}

/** Builds facts that all came from one source; undefined and null values are left absent. */
export function factsFrom(source: FactSource, values: Record<string, Scalar | null | undefined>): Facts {
  const facts: Facts = {};
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null) facts[name] = { value, source };
  }
  return facts;
}
