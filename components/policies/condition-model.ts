import type { Condition, PropertyDefinition, Scalar } from "@/server/domain/policy/schemas";

// The editor's view of conditions: a leaf is (property, operator, value), a group is
// (all | any | none, children). Pure helpers that move between that view and the stored keyed
// objects (`{ property, is }`), and keep a leaf well-typed when its property or operator changes.

export type Operator = "is" | "isNot" | "inList" | "below" | "above" | "isEmpty";
export type GroupKind = "all" | "any" | "none";

export type LeafView = { property: string; op: Operator; value: Scalar | Scalar[] };

export const operatorLabel: Record<Operator, string> = {
  is: "is",
  isNot: "is not",
  inList: "is one of",
  below: "is below",
  above: "is above",
  isEmpty: "presence",
};

export const groupLabel: Record<GroupKind, string> = {
  all: "All of",
  any: "Any of",
  none: "None of",
};

/** The operators that make sense for a property's type. */
export function operatorsFor(property: PropertyDefinition): Operator[] {
  switch (property.type) {
    case "integer":
      return ["is", "isNot", "inList", "below", "above", "isEmpty"];
    case "boolean":
      return ["is", "isNot", "isEmpty"];
    default:
      return ["is", "isNot", "inList", "isEmpty"];
  }
}

export function isGroupCondition(condition: Condition): condition is Extract<Condition, { all: Condition[] } | { any: Condition[] } | { none: Condition[] }> {
  return "all" in condition || "any" in condition || "none" in condition;
}

export function groupOf(condition: Condition): { kind: GroupKind; children: Condition[] } | null {
  if ("all" in condition) return { kind: "all", children: condition.all };
  if ("any" in condition) return { kind: "any", children: condition.any };
  if ("none" in condition) return { kind: "none", children: condition.none };
  return null;
}

export function makeGroup(kind: GroupKind, children: Condition[]): Condition {
  if (kind === "all") return { all: children };
  if (kind === "any") return { any: children };
  return { none: children };
}

export function leafOf(condition: Condition): LeafView | null {
  if (isGroupCondition(condition)) return null;
  if ("is" in condition) return { property: condition.property, op: "is", value: condition.is };
  if ("isNot" in condition) return { property: condition.property, op: "isNot", value: condition.isNot };
  if ("inList" in condition) return { property: condition.property, op: "inList", value: condition.inList };
  if ("below" in condition) return { property: condition.property, op: "below", value: condition.below };
  if ("above" in condition) return { property: condition.property, op: "above", value: condition.above };
  return { property: condition.property, op: "isEmpty", value: condition.isEmpty };
}

/** A value of the property's type; `hint` is kept when it already fits. */
export function defaultValue(property: PropertyDefinition, hint?: unknown): Scalar {
  switch (property.type) {
    case "enum":
      return typeof hint === "string" && property.values.includes(hint) ? hint : (property.values[0] ?? "");
    case "boolean":
      return typeof hint === "boolean" ? hint : true;
    case "integer":
      // A NaN (a cleared number input) is kept: the schema reports it instead of a silent 0.
      return typeof hint === "number" ? hint : (property.min ?? 0);
    case "string":
      return typeof hint === "string" ? hint : "";
  }
}

function first<T>(value: T | T[]): T | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Builds a stored leaf, coercing the value to what the operator takes. */
export function makeLeaf(property: PropertyDefinition, op: Operator, value: unknown): Condition {
  const name = property.name;
  switch (op) {
    case "isEmpty":
      return { property: name, isEmpty: typeof value === "boolean" ? value : true };
    case "below":
    case "above": {
      const n = first(value as Scalar | Scalar[]);
      const num = typeof n === "number" ? n : (property.type === "integer" ? (property.min ?? 0) : 0);
      return op === "below" ? { property: name, below: num } : { property: name, above: num };
    }
    case "inList": {
      const list = (Array.isArray(value) ? value : [value]).filter((v): v is Scalar => v !== undefined);
      const fitting = list.map((v) => defaultValue(property, v));
      return { property: name, inList: fitting.length > 0 ? [...new Set(fitting)] : [defaultValue(property)] };
    }
    case "is":
      return { property: name, is: defaultValue(property, first(value as Scalar | Scalar[])) };
    case "isNot":
      return { property: name, isNot: defaultValue(property, first(value as Scalar | Scalar[])) };
  }
}

/** A leaf moved to another property: the operator and value are kept when the new type allows them. */
export function retarget(leaf: LeafView, property: PropertyDefinition): Condition {
  const ops = operatorsFor(property);
  const op = ops.includes(leaf.op) ? leaf.op : (ops[0] ?? "is");
  return makeLeaf(property, op, leaf.value);
}

/** The first property a new condition should test: one that is a fact, not a rules-only one. */
export function newLeaf(properties: PropertyDefinition[]): Condition | null {
  const property = properties.find((p) => !p.rulesOnly);
  return property ? makeLeaf(property, operatorsFor(property)[0] ?? "is", undefined) : null;
}
