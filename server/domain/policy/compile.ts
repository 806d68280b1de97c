import { AppError } from "@/server/errors";
import { compileCondition, type CompiledCondition } from "./conditions";
import type { DefaultConclusion, PolicyDefinition, PropertyDefinition, Rule } from "./model";
import { PolicyDefinitionError, validatePolicy } from "./validate";

// The lookups evaluation and the checks need, built once per definition object. Definitions are
// treated as immutable (definePolicy freezes them); a changed definition is a new object.

export type RankedRule = Rule & { rank: number };
export type ExecutableRule = RankedRule & CompiledCondition;

export type DecidedProperty = {
  property: PropertyDefinition;
  fallback: DefaultConclusion;
  /** Rules concluding this property, in winning order: priority high to low, then listing order. */
  rules: ExecutableRule[];
};

export type CompiledPolicy = {
  definition: PolicyDefinition;
  properties: Map<string, PropertyDefinition>;
  required: PropertyDefinition[];
  decisions: Map<string, DecidedProperty>;
  /** The decided property when there is exactly one. */
  only: DecidedProperty | undefined;
};

const cache = new WeakMap<PolicyDefinition, CompiledPolicy>();

/** Winning order: higher priority first; equal priorities keep the order the rules are listed in. */
export function rankRules(rules: readonly Rule[]): RankedRule[] {
  return rules
    .map((rule, index) => ({ ...rule, rank: index }))
    .sort((a, b) => b.priority - a.priority || a.rank - b.rank);
}

export function compilePolicy(definition: PolicyDefinition): CompiledPolicy {
  const cached = cache.get(definition);
  if (cached) return cached;
  const issues = validatePolicy(definition);
  if (issues.length > 0) throw new PolicyDefinitionError(issues);

  const properties = new Map(definition.properties.map((p) => [p.name, p] as const));
  const decisions = new Map<string, DecidedProperty>();
  for (const fallback of definition.defaults) {
    const property = properties.get(fallback.property);
    if (!property) continue; // unreachable after validation
    const rules = rankRules(definition.rules.filter((rule) => rule.then.property === fallback.property)).map(
      (rule) => ({ ...rule, ...compileCondition(rule.when) }),
    );
    decisions.set(fallback.property, { property, fallback, rules });
  }
  const compiled: CompiledPolicy = {
    definition,
    properties,
    required: definition.properties.filter((p) => !p.rulesOnly && p.cardinality === "1"),
    decisions,
    only: decisions.size === 1 ? [...decisions.values()][0] : undefined,
  };
  cache.set(definition, compiled);
  return compiled;
}

/** The decided property named, or the only one when the policy decides a single property. */
export function pickDecision(compiled: CompiledPolicy, property?: string): DecidedProperty {
  const direct = property === undefined ? compiled.only : compiled.decisions.get(property);
  if (direct) return direct;
  const names = [...compiled.decisions.keys()];
  const name = property ?? (names.length === 1 ? names[0] : undefined);
  const decision = name === undefined ? undefined : compiled.decisions.get(name);
  if (!decision) {
    const kind = compiled.definition.kind;
    throw new AppError(
      "BAD_REQUEST",
      property === undefined
        ? `policy ${kind} decides ${names.join(", ")}; name the property to decide`
        : `policy ${kind} does not decide ${property} (it decides ${names.join(", ")})`,
      { reason: "unknown_decision", details: { policy: kind, property, decides: names } },
    );
  }
  return decision;
}
