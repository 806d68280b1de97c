import { z } from "zod";
import { zPolicyName, zScalar, type Scalar } from "./model";

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
