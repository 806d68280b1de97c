import { canonicalJson } from "./digest";
import {
  groupParts,
  isGroup,
  leafParts,
  type Condition,
  type PolicyDefinition,
  type PropertyDefinition,
  type Rule,
  type Scalar,
} from "./model";

// A structural diff of two definitions, as people review it: rules matched by name (a rename
// reads as one removed and one added), each changed field shown before and after as one line
// of text; the model (properties), the defaults and rule order beside them.

export type FieldChange = { field: string; before: string; after: string };

export type PolicyDiff = {
  rules: {
    added: { name: string; summary: string }[];
    removed: { name: string; summary: string }[];
    changed: { name: string; changes: FieldChange[] }[];
    /** Rules present in both whose listing order changed (it breaks priority ties). */
    reordered: boolean;
  };
  properties: {
    added: string[];
    removed: string[];
    changed: { name: string; before: string; after: string }[];
  };
  defaults: { property: string; changes: FieldChange[] }[];
  /** name, description, subject. */
  meta: FieldChange[];
  /** False when the two definitions are identical. */
  changed: boolean;
};

function formatScalar(value: Scalar): string {
  return typeof value === "string" ? value : String(value);
}

/** One line for a condition tree: `all(failing_stage is test, known_flaky is true)`. */
export function formatCondition(condition: Condition): string {
  if (isGroup(condition)) {
    const { kind, children } = groupParts(condition);
    return `${kind}(${children.map(formatCondition).join(", ")})`;
  }
  const parts = leafParts(condition);
  switch (parts.test) {
    case "inList":
      return `${condition.property} in [${parts.expected.map(formatScalar).join(", ")}]`;
    case "isEmpty":
      return parts.expected ? `${condition.property} is empty` : `${condition.property} is present`;
    case "isNot":
      return `${condition.property} is not ${formatScalar(parts.expected)}`;
    default:
      return `${condition.property} ${parts.test} ${formatScalar(parts.expected)}`;
  }
}

function formatRule(rule: Rule): string {
  return `priority ${rule.priority}: when ${formatCondition(rule.when)} then ${rule.then.property} = ${formatScalar(rule.then.value)}`;
}

function formatProperty(property: PropertyDefinition): string {
  const parts: string[] = [property.type];
  if (property.type === "enum") parts.push(`{${property.values.join(", ")}}`);
  if (property.type === "integer") parts.push(`[${property.min ?? "-∞"}, ${property.max ?? "∞"}]`);
  parts.push(`cardinality ${property.cardinality}`);
  if (property.rulesOnly) parts.push("rules only");
  if (property.description) parts.push(`"${property.description}"`);
  return parts.join(" ");
}

function change(field: string, before: string, after: string): FieldChange[] {
  return before === after ? [] : [{ field, before, after }];
}

export function diffPolicyDefinitions(before: PolicyDefinition, after: PolicyDefinition): PolicyDiff {
  const oldRules = new Map(before.rules.map((rule) => [rule.name, rule] as const));
  const newRules = new Map(after.rules.map((rule) => [rule.name, rule] as const));

  const added = after.rules.filter((r) => !oldRules.has(r.name)).map((r) => ({ name: r.name, summary: formatRule(r) }));
  const removed = before.rules.filter((r) => !newRules.has(r.name)).map((r) => ({ name: r.name, summary: formatRule(r) }));
  const changed: PolicyDiff["rules"]["changed"] = [];
  for (const rule of after.rules) {
    const old = oldRules.get(rule.name);
    if (!old) continue;
    const changes = [
      ...change("priority", String(old.priority), String(rule.priority)),
      ...change("when", formatCondition(old.when), formatCondition(rule.when)),
      ...change(
        "then",
        `${old.then.property} = ${formatScalar(old.then.value)}`,
        `${rule.then.property} = ${formatScalar(rule.then.value)}`,
      ),
      ...change("explanation", old.explanation, rule.explanation),
    ];
    if (changes.length > 0) changed.push({ name: rule.name, changes });
  }
  const common = (rules: Rule[], other: Map<string, Rule>) => rules.filter((r) => other.has(r.name)).map((r) => r.name);
  const reordered = common(before.rules, newRules).join("\n") !== common(after.rules, oldRules).join("\n");

  const oldProps = new Map(before.properties.map((p) => [p.name, p] as const));
  const newProps = new Map(after.properties.map((p) => [p.name, p] as const));
  const properties: PolicyDiff["properties"] = {
    added: after.properties.filter((p) => !oldProps.has(p.name)).map((p) => p.name),
    removed: before.properties.filter((p) => !newProps.has(p.name)).map((p) => p.name),
    changed: after.properties.flatMap((p) => {
      const old = oldProps.get(p.name);
      if (!old) return [];
      const [b, a] = [formatProperty(old), formatProperty(p)];
      return b === a ? [] : [{ name: p.name, before: b, after: a }];
    }),
  };

  const oldDefaults = new Map(before.defaults.map((d) => [d.property, d] as const));
  const defaults = after.defaults.flatMap((d) => {
    const old = oldDefaults.get(d.property);
    const changes = [
      ...change("value", old ? formatScalar(old.value) : "(none)", formatScalar(d.value)),
      ...change("explanation", old?.explanation ?? "(none)", d.explanation),
    ];
    return changes.length > 0 ? [{ property: d.property, changes }] : [];
  });
  for (const d of before.defaults) {
    if (!after.defaults.some((x) => x.property === d.property)) {
      defaults.push({ property: d.property, changes: [{ field: "value", before: formatScalar(d.value), after: "(none)" }] });
    }
  }

  const meta = [
    ...change("name", before.name, after.name),
    ...change("description", before.description ?? "", after.description ?? ""),
    ...change("subject", before.subject, after.subject),
  ];
  return {
    rules: { added, removed, changed, reordered },
    properties,
    defaults,
    meta,
    changed: canonicalJson(before) !== canonicalJson(after),
  };
}
