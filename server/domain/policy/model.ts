import { z } from "zod";

// The policy model: what a policy talks about (its subject and typed properties), the rules that
// decide its rules-only properties, and the fail-closed defaults used when no rule matches.
// Definitions are data (stored as JSON in PolicyVersion.definition); parse them with
// `parsePolicy` (validate.ts), which also checks the definition against itself.

/** snake_case identifiers for kinds, subjects, properties and rule names. */
export const zPolicyName = z
  .string()
  .max(64, "At most 64 characters")
  .regex(/^[a-z][a-z0-9_]*$/, "must be snake_case (a-z, 0-9, _), starting with a letter");

export const zScalar = z.union([z.string().max(200, "At most 200 characters"), z.number(), z.boolean()]);
export type Scalar = z.infer<typeof zScalar>;

const propertyCommon = {
  name: zPolicyName,
  description: z.string().max(2_000).optional(),
  /** "1": every fact set must carry this property; "0..1": it may be absent (closed world). */
  cardinality: z.enum(["1", "0..1"]).default("0..1"),
  /** Decided by the policy's rules; asserting it as a fact is refused (`provenance_refused`). */
  rulesOnly: z.boolean().default(false),
};

export const zEnumProperty = z.strictObject({
  ...propertyCommon,
  type: z.literal("enum"),
  values: z.array(z.string().min(1).max(200)).min(1).max(100, "At most 100 values"),
});

export const zBooleanProperty = z.strictObject({
  ...propertyCommon,
  type: z.literal("boolean"),
});

export const zIntegerProperty = z.strictObject({
  ...propertyCommon,
  type: z.literal("integer"),
  min: z.int().optional(),
  max: z.int().optional(),
});

export const zStringProperty = z.strictObject({
  ...propertyCommon,
  type: z.literal("string"),
});

export const zPropertyDefinition = z.discriminatedUnion("type", [
  zEnumProperty,
  zBooleanProperty,
  zIntegerProperty,
  zStringProperty,
]);
export type PropertyDefinition = z.infer<typeof zPropertyDefinition>;

// Conditions. Leaves test one property; groups nest. Written as readable keyed objects
// (`{ property: "failing_stage", is: "deploy" }`) because people read and review them as data.
export type LeafCondition =
  | { property: string; is: Scalar }
  | { property: string; isNot: Scalar }
  | { property: string; inList: Scalar[] }
  | { property: string; below: number }
  | { property: string; above: number }
  | { property: string; isEmpty: boolean };

export type GroupCondition = { all: Condition[] } | { any: Condition[] } | { none: Condition[] };

export type Condition = LeafCondition | GroupCondition;

export type GroupKind = "all" | "any" | "none";

// Recursive, so the type is declared by hand above and the schema is checked against it.
export const zCondition: z.ZodType<Condition, Condition> = z.lazy(() =>
  z.union([
    z.strictObject({ property: zPolicyName, is: zScalar }),
    z.strictObject({ property: zPolicyName, isNot: zScalar }),
    z.strictObject({ property: zPolicyName, inList: z.array(zScalar).min(1).max(100, "At most 100 values") }),
    z.strictObject({ property: zPolicyName, below: z.int() }),
    z.strictObject({ property: zPolicyName, above: z.int() }),
    z.strictObject({ property: zPolicyName, isEmpty: z.boolean() }),
    z.strictObject({ all: z.array(zCondition).min(1).max(50, "At most 50 conditions in a group") }),
    z.strictObject({ any: z.array(zCondition).min(1).max(50, "At most 50 conditions in a group") }),
    z.strictObject({ none: z.array(zCondition).min(1).max(50, "At most 50 conditions in a group") }),
  ]),
);

const zOneLine = z
  .string()
  .min(1)
  .max(500, "At most 500 characters")
  .regex(/^[^\r\n]*$/, "must be a single line");

export const zConclusion = z.strictObject({
  property: zPolicyName,
  value: zScalar,
});

export const zRule = z.strictObject({
  name: zPolicyName,
  /** Higher wins. Ties go to the rule listed first in `rules`. */
  priority: z.number(),
  when: zCondition,
  then: zConclusion,
  explanation: zOneLine,
});
export type Rule = z.infer<typeof zRule>;

/** The value a rules-only property takes when no rule matches: the fail-closed outcome. */
export const zDefaultConclusion = z.strictObject({
  property: zPolicyName,
  value: zScalar,
  explanation: zOneLine,
});
export type DefaultConclusion = z.infer<typeof zDefaultConclusion>;

export const zPolicyDefinition = z.strictObject({
  /** Stable identifier, e.g. "ci_triage"; matches the stored Policy.kind. */
  kind: zPolicyName,
  name: z.string().min(1).max(200),
  description: z.string().max(2_000).optional(),
  /** What a fact set describes, e.g. "build_failure". */
  subject: zPolicyName,
  properties: z.array(zPropertyDefinition).min(1).max(50, "At most 50 properties"),
  rules: z.array(zRule).max(200, "At most 200 rules"),
  /** One per rules-only property. */
  defaults: z.array(zDefaultConclusion).min(1).max(50, "At most 50 defaults"),
});
export type PolicyDefinition = z.infer<typeof zPolicyDefinition>;
export type PolicyDefinitionInput = z.input<typeof zPolicyDefinition>;

export function isGroup(condition: Condition): condition is GroupCondition {
  return "all" in condition || "any" in condition || "none" in condition;
}

export function groupParts(condition: GroupCondition): { kind: GroupKind; children: Condition[] } {
  if ("all" in condition) return { kind: "all", children: condition.all };
  if ("any" in condition) return { kind: "any", children: condition.any };
  return { kind: "none", children: condition.none };
}

export type LeafParts =
  | { test: "is" | "isNot"; expected: Scalar }
  | { test: "inList"; expected: Scalar[] }
  | { test: "below" | "above"; expected: number }
  | { test: "isEmpty"; expected: boolean };

export function leafParts(leaf: LeafCondition): LeafParts {
  if ("is" in leaf) return { test: "is", expected: leaf.is };
  if ("isNot" in leaf) return { test: "isNot", expected: leaf.isNot };
  if ("inList" in leaf) return { test: "inList", expected: leaf.inList };
  if ("below" in leaf) return { test: "below", expected: leaf.below };
  if ("above" in leaf) return { test: "above", expected: leaf.above };
  return { test: "isEmpty", expected: leaf.isEmpty };
}
