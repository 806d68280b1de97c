import { forEachLeaf } from "../conditions";
import { leafParts, type PolicyDefinition, type Scalar } from "../model";

// Test support: every concrete fact assignment of a small policy, by brute force. The checks
// must agree with this, so it deliberately shares nothing with them but the model.

export type Assignment = Record<string, Scalar>;

/**
 * Concrete values per property: enum and boolean values, every integer in a window around the
 * thresholds (clipped to the bounds), the string literals rules name plus one unnamed string,
 * and absence unless the property is required.
 */
export function concreteValues(policy: PolicyDefinition, window = 3): Map<string, (Scalar | undefined)[]> {
  const out = new Map<string, (Scalar | undefined)[]>();
  for (const property of policy.properties) {
    if (property.rulesOnly) continue;
    const named: Scalar[] = [];
    for (const rule of policy.rules) {
      forEachLeaf(rule.when, (leaf) => {
        if (leaf.property !== property.name) return;
        const parts = leafParts(leaf);
        if (parts.test === "isEmpty") return;
        for (const v of Array.isArray(parts.expected) ? parts.expected : [parts.expected]) named.push(v);
      });
    }
    let values: Scalar[];
    switch (property.type) {
      case "enum":
        values = [...property.values];
        break;
      case "boolean":
        values = [true, false];
        break;
      case "string":
        values = [...new Set(named.filter((v) => typeof v === "string")), "zz_unnamed"];
        break;
      case "integer": {
        const numbers = named.filter((v): v is number => typeof v === "number");
        const lo = Math.max(property.min ?? -Infinity, Math.min(0, ...numbers) - window);
        const hi = Math.min(property.max ?? Infinity, Math.max(0, ...numbers) + window);
        values = [];
        for (let n = lo; n <= hi; n++) values.push(n);
        break;
      }
    }
    out.set(property.name, property.cardinality === "1" ? values : [...values, undefined]);
  }
  return out;
}

export function* assignments(policy: PolicyDefinition, window = 3): Generator<Assignment> {
  const entries = [...concreteValues(policy, window).entries()];
  function* walk(index: number, current: Assignment): Generator<Assignment> {
    const entry = entries[index];
    if (!entry) {
      yield { ...current };
      return;
    }
    const [name, values] = entry;
    for (const value of values) {
      if (value === undefined) {
        yield* walk(index + 1, current);
      } else {
        current[name] = value;
        yield* walk(index + 1, current);
        delete current[name];
      }
    }
  }
  yield* walk(0, {});
}
