import { AppError } from "@/server/errors";
import {
  groupParts,
  isGroup,
  leafParts,
  zPolicyDefinition,
  type Condition,
  type PolicyDefinition,
  type PolicyDefinitionInput,
  type PropertyDefinition,
  type Scalar,
} from "./model";

// A definition is checked against itself before anything evaluates it: every name a rule uses
// must exist, every value must fit its property, and only rules-only properties are concluded.

export type PolicyIssueConstraint =
  | "schema"
  | "duplicate_property"
  | "duplicate_value"
  | "bounds_inverted"
  | "duplicate_rule"
  | "unknown_property"
  | "value_not_in_enum"
  | "wrong_type"
  | "out_of_bounds"
  | "comparison_needs_integer"
  | "condition_on_rules_only"
  | "conclusion_not_rules_only"
  | "default_not_rules_only"
  | "duplicate_default"
  | "missing_default";

export type PolicyIssue = {
  constraint: PolicyIssueConstraint;
  /** The rule the issue is in, or null for the model and the defaults. */
  rule: string | null;
  path: (string | number)[];
  message: string;
};

export class PolicyDefinitionError extends AppError {
  readonly issues: PolicyIssue[];

  constructor(issues: PolicyIssue[]) {
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    super("UNPROCESSABLE", `invalid policy: ${first?.message ?? "unknown problem"}${more}`, {
      reason: "invalid_policy",
      details: { issues },
    });
    this.name = "PolicyDefinitionError";
    this.issues = issues;
  }
}

function describe(value: Scalar): string {
  return JSON.stringify(value);
}

/** Checks a value against a property's type; returns the violated constraint, if any. */
export function valueProblem(
  property: PropertyDefinition,
  value: Scalar,
): { constraint: "value_not_in_enum" | "wrong_type" | "out_of_bounds"; message: string } | null {
  switch (property.type) {
    case "enum":
      if (typeof value === "string" && property.values.includes(value)) return null;
      return {
        constraint: "value_not_in_enum",
        message: `${describe(value)} is not one of ${property.name}'s values (${property.values.join(", ")})`,
      };
    case "boolean":
      if (typeof value === "boolean") return null;
      return { constraint: "wrong_type", message: `${property.name} takes true or false, not ${describe(value)}` };
    case "string":
      if (typeof value === "string") return null;
      return { constraint: "wrong_type", message: `${property.name} takes a string, not ${describe(value)}` };
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        return { constraint: "wrong_type", message: `${property.name} takes an integer, not ${describe(value)}` };
      }
      if (
        (property.min !== undefined && value < property.min) ||
        (property.max !== undefined && value > property.max)
      ) {
        return {
          constraint: "out_of_bounds",
          message: `${value} is outside ${property.name}'s bounds [${property.min ?? "-∞"}, ${property.max ?? "∞"}]`,
        };
      }
      return null;
  }
}

export function validatePolicy(policy: PolicyDefinition): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const properties = new Map<string, PropertyDefinition>();

  policy.properties.forEach((property, index) => {
    const path = ["properties", index];
    if (properties.has(property.name)) {
      issues.push({ constraint: "duplicate_property", rule: null, path, message: `property ${property.name} is defined twice` });
    }
    properties.set(property.name, property);
    if (property.type === "enum" && new Set(property.values).size !== property.values.length) {
      issues.push({ constraint: "duplicate_value", rule: null, path, message: `enum ${property.name} lists a value twice` });
    }
    if (property.type === "integer" && property.min !== undefined && property.max !== undefined && property.min > property.max) {
      issues.push({ constraint: "bounds_inverted", rule: null, path, message: `${property.name} has min ${property.min} above max ${property.max}` });
    }
  });

  const ruleNames = new Set<string>();
  policy.rules.forEach((rule, index) => {
    const at = (...rest: (string | number)[]) => ["rules", index, ...rest];
    const push = (constraint: PolicyIssueConstraint, path: (string | number)[], message: string) =>
      issues.push({ constraint, rule: rule.name, path, message: `rule ${rule.name}: ${message} [${constraint}]` });

    if (ruleNames.has(rule.name)) push("duplicate_rule", at("name"), "the name is used by an earlier rule");
    ruleNames.add(rule.name);

    const walk = (condition: Condition, path: (string | number)[]): void => {
      if (isGroup(condition)) {
        const { kind, children } = groupParts(condition);
        children.forEach((child, i) => walk(child, [...path, kind, i]));
        return;
      }
      const property = properties.get(condition.property);
      if (!property) {
        push("unknown_property", path, `condition tests unknown property ${condition.property}`);
        return;
      }
      if (property.rulesOnly) {
        push(
          "condition_on_rules_only",
          path,
          `condition tests ${property.name}, which only rules assign and so is never a fact`,
        );
      }
      const parts = leafParts(condition);
      if (parts.test === "isEmpty") return;
      if (parts.test === "below" || parts.test === "above") {
        if (property.type !== "integer") {
          push("comparison_needs_integer", path, `${parts.test} compares integers, but ${property.name} is ${property.type}`);
        }
        return;
      }
      const values = parts.test === "inList" ? parts.expected : [parts.expected];
      for (const value of values) {
        const problem = valueProblem(property, value);
        if (problem) push(problem.constraint, path, `condition ${parts.test}: ${problem.message}`);
      }
    };
    walk(rule.when, at("when"));

    const concluded = properties.get(rule.then.property);
    if (!concluded) {
      push("unknown_property", at("then"), `concludes unknown property ${rule.then.property}`);
    } else {
      if (!concluded.rulesOnly) {
        push("conclusion_not_rules_only", at("then"), `concludes ${concluded.name}, which is not assigned by rules only`);
      }
      const problem = valueProblem(concluded, rule.then.value);
      if (problem) push(problem.constraint, at("then"), `conclusion: ${problem.message}`);
    }
  });

  const defaulted = new Set<string>();
  policy.defaults.forEach((fallback, index) => {
    const path = ["defaults", index];
    const push = (constraint: PolicyIssueConstraint, message: string) =>
      issues.push({ constraint, rule: null, path, message: `default for ${fallback.property}: ${message} [${constraint}]` });
    const property = properties.get(fallback.property);
    if (!property) return push("unknown_property", "no such property");
    if (!property.rulesOnly) push("default_not_rules_only", "only rules-only properties take a default");
    if (defaulted.has(fallback.property)) push("duplicate_default", "a default is already given");
    defaulted.add(fallback.property);
    const problem = valueProblem(property, fallback.value);
    if (problem) push(problem.constraint, problem.message);
  });
  for (const property of properties.values()) {
    if (property.rulesOnly && !defaulted.has(property.name)) {
      issues.push({
        constraint: "missing_default",
        rule: null,
        path: ["defaults"],
        message: `rules-only property ${property.name} has no fail-closed default [missing_default]`,
      });
    }
  }
  return issues;
}

/** Parses untrusted input (a stored definition, an API body) into a valid definition. */
export function parsePolicy(input: unknown): PolicyDefinition {
  const parsed = zPolicyDefinition.safeParse(input);
  if (!parsed.success) {
    throw new PolicyDefinitionError(
      parsed.error.issues.map((issue) => {
        const path = issue.path.filter((part): part is string | number => typeof part !== "symbol");
        return { constraint: "schema", rule: null, path, message: `${path.join(".") || "definition"}: ${issue.message}` };
      }),
    );
  }
  const issues = validatePolicy(parsed.data);
  if (issues.length > 0) throw new PolicyDefinitionError(issues);
  return parsed.data;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * For definitions written in code: parses, validates and freezes. Frozen because evaluation
 * caches its compiled form per definition object, so a definition must not change after use.
 */
export function definePolicy(input: PolicyDefinitionInput): PolicyDefinition {
  return deepFreeze(parsePolicy(input));
}
