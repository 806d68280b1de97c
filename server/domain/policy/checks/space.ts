import { AppError } from "@/server/errors";
import { BOX_LIMIT, BoxAlgebra, tooComplex, type Box } from "./boxes";
import { compilePolicy, type CompiledPolicy, type RankedRule } from "../compile";
import { forEachLeaf, leafHolds } from "../conditions";
import { groupParts, isGroup, leafParts, type Condition, type PolicyDefinition, type PropertyDefinition, type Scalar } from "../model";

// The finite fact space the checks work in. Each property the rules mention is cut into cells
// such that every condition in the policy is constant inside a cell: enum and boolean values,
// integer intervals between the thresholds rules use, the string literals rules name plus one
// "other" cell, and "absent" unless the property is required. A region is one cell set per
// property (a box, see boxes.ts) and a rule's condition is a union of boxes, so every check is
// exact set algebra on boxes, with no sampling. Only properties some rule mentions get a
// dimension: the others cannot change any outcome.

export type CellDescriptor =
  | { kind: "absent"; label: string }
  | { kind: "value"; value: Scalar; label: string }
  | { kind: "range"; min: number | null; max: number | null; label: string }
  | { kind: "other"; except: string[]; label: string };

export type Dimension = {
  property: PropertyDefinition;
  cells: CellDescriptor[];
  /** A concrete value inside each cell (undefined for "absent"): evaluates exactly like the cell. */
  representatives: (Scalar | undefined)[];
};

export type RuleShape = { rule: RankedRule; boxes: Box[] };

export type FactSpace = {
  compiled: CompiledPolicy;
  dimensions: Dimension[];
  algebra: BoxAlgebra;
  /** Rules of each decided property in winning order, with the region where each matches. */
  shapes: Map<string, RuleShape[]>;
};

function rangeLabel(min: number | null, max: number | null): string {
  if (min !== null && max !== null) return min === max ? String(min) : `${min}..${max}`;
  if (min !== null) return `≥${min}`;
  if (max !== null) return `≤${max}`;
  return "any";
}

function buildDimension(property: PropertyDefinition, conditions: Condition[]): Dimension {
  const cells: CellDescriptor[] = [];
  const representatives: (Scalar | undefined)[] = [];
  const add = (cell: CellDescriptor, representative: Scalar | undefined) => {
    cells.push(cell);
    representatives.push(representative);
  };
  const literals: Scalar[] = [];
  const cuts = new Set<number>();
  for (const condition of conditions) {
    forEachLeaf(condition, (leaf) => {
      if (leaf.property !== property.name) return;
      const parts = leafParts(leaf);
      // A cut at x separates x-1 from x: `below c` cuts at c, `above c` at c+1, `is n` at n and n+1.
      if (parts.test === "below") cuts.add(parts.expected);
      else if (parts.test === "above") cuts.add(parts.expected + 1);
      else if (parts.test === "is" || parts.test === "isNot" || parts.test === "inList") {
        for (const value of Array.isArray(parts.expected) ? parts.expected : [parts.expected]) {
          if (!literals.includes(value)) literals.push(value);
          if (typeof value === "number") cuts.add(value).add(value + 1);
        }
      }
    });
  }

  switch (property.type) {
    case "enum":
      for (const value of property.values) add({ kind: "value", value, label: value }, value);
      break;
    case "boolean":
      for (const value of [true, false]) add({ kind: "value", value, label: String(value) }, value);
      break;
    case "string": {
      const named = literals.filter((v): v is string => typeof v === "string");
      for (const value of named) add({ kind: "value", value, label: JSON.stringify(value) }, value);
      let other = "other";
      for (let i = 1; named.includes(other); i++) other = `other_${i}`;
      add({ kind: "other", except: named, label: "other" }, other);
      break;
    }
    case "integer": {
      const lo = property.min ?? null;
      const hi = property.max ?? null;
      let start = lo;
      const sorted = [...cuts].sort((a, b) => a - b);
      for (const cut of sorted) {
        if ((lo !== null && cut <= lo) || (hi !== null && cut > hi)) continue;
        add({ kind: "range", min: start, max: cut - 1, label: rangeLabel(start, cut - 1) }, start ?? cut - 1);
        start = cut;
      }
      add({ kind: "range", min: start, max: hi, label: rangeLabel(start, hi) }, start ?? hi ?? 0);
      break;
    }
  }
  if (property.cardinality !== "1") add({ kind: "absent", label: "absent" }, undefined);
  return { property, cells, representatives };
}

/** The region where a condition holds, as a union of boxes (not necessarily disjoint). */
function conditionBoxes(
  algebra: BoxAlgebra,
  dimensions: Dimension[],
  index: Map<string, number>,
  condition: Condition,
): Box[] {
  if (!isGroup(condition)) {
    const d = index.get(condition.property);
    const dimension = d === undefined ? undefined : dimensions[d];
    if (d === undefined || !dimension) return []; // unreachable: every mentioned property has a dimension
    const parts = leafParts(condition);
    // Every condition is constant inside a cell, so testing one representative decides the cell.
    const cells = dimension.representatives.flatMap((value, cell) => (leafHolds(parts, value) ? [cell] : []));
    return cells.length === 0 ? [] : [algebra.slab(d, cells)];
  }
  const { kind, children } = groupParts(condition);
  const parts = children.map((child) => conditionBoxes(algebra, dimensions, index, child));
  if (kind === "any") return algebra.absorb(parts.flat());
  if (kind === "none") return algebra.subtractAll([algebra.universe], parts.flat());
  let acc: Box[] = [algebra.universe];
  for (const part of parts) {
    const next: Box[] = [];
    for (const a of acc) {
      for (const b of part) {
        const both = algebra.intersect(a, b);
        if (both) next.push(both);
      }
    }
    if (next.length > BOX_LIMIT) tooComplex("a condition");
    acc = algebra.absorb(next);
    if (acc.length === 0) break;
  }
  return acc;
}

const spaces = new WeakMap<PolicyDefinition, FactSpace>();

export function factSpace(policy: PolicyDefinition): FactSpace {
  const cached = spaces.get(policy);
  if (cached) return cached;
  const compiled = compilePolicy(policy);
  const conditions = policy.rules.map((rule) => rule.when);
  const mentioned = new Set<string>();
  for (const condition of conditions) forEachLeaf(condition, (leaf) => mentioned.add(leaf.property));
  // Required properties join even when unmentioned, so examples are fact sets evaluation accepts.
  const dimensions = policy.properties
    .filter((p) => !p.rulesOnly && (mentioned.has(p.name) || p.cardinality === "1"))
    .map((p) => buildDimension(p, conditions));
  const index = new Map(dimensions.map((d, i) => [d.property.name, i] as const));
  const algebra = new BoxAlgebra(dimensions.map((d) => d.cells.length));
  const shapes = new Map<string, RuleShape[]>();
  for (const [name, decided] of compiled.decisions) {
    shapes.set(
      name,
      decided.rules.map((rule) => ({ rule, boxes: conditionBoxes(algebra, dimensions, index, rule.when) })),
    );
  }
  const space: FactSpace = { compiled, dimensions, algebra, shapes };
  spaces.set(policy, space);
  return space;
}

/** The decided properties a check covers: the one named, or all of them. */
export function selectShapes(space: FactSpace, property?: string): [string, RuleShape[]][] {
  if (property === undefined) return [...space.shapes.entries()];
  const shapes = space.shapes.get(property);
  if (!shapes) {
    throw new AppError("BAD_REQUEST", `policy ${space.compiled.definition.kind} does not decide ${property}`, {
      reason: "unknown_decision",
    });
  }
  return [[property, shapes]];
}
