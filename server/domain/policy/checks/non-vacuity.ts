import type { PolicyDefinition } from "../model";
import { describeBox, type Region } from "./region";
import type { Box, BoxAlgebra } from "./boxes";
import { factSpace, selectShapes, type RuleShape } from "./space";

// A rule is vacuous when it never decides anything: nothing can match it, or wherever it matches
// a rule ahead of it in winning order already decides. "redundant" means those rules conclude
// the same value (the rule restates them); "overridden" means at least one concludes otherwise.

export type VacuousRule = {
  property: string;
  rule: string;
  reason: "never_matches" | "redundant" | "overridden";
  /** The rules that decide wherever this one matches, in winning order. */
  overriddenBy: string[];
};

/** A piece of `box` outside every blocker from index `from` on, or null; depth first, stops at the first. */
function survivor(algebra: BoxAlgebra, box: Box, blockers: Box[], from: number): Box | null {
  let i = from;
  while (i < blockers.length && !algebra.overlaps(box, blockers[i]!)) i++;
  const blocker = blockers[i];
  if (!blocker) return box;
  const pieces: Box[] = [];
  algebra.subtract(box, blocker, pieces);
  for (const piece of pieces) {
    const found = survivor(algebra, piece, blockers, i + 1);
    if (found) return found;
  }
  return null;
}

/** Where a rule actually wins: one example region, or null when it never does. */
export function winningRegion(algebra: BoxAlgebra, shapes: RuleShape[], index: number): Box | null {
  const shape = shapes[index];
  if (!shape) return null;
  const ahead = shapes.slice(0, index).flatMap((s) => s.boxes);
  for (const box of shape.boxes) {
    const blockers = ahead.filter((b) => algebra.overlaps(box, b));
    const found = survivor(algebra, box, blockers, 0);
    if (found) return found;
  }
  return null;
}

function deciders(algebra: BoxAlgebra, shapes: RuleShape[], index: number): RuleShape[] {
  let remaining = shapes[index]?.boxes ?? [];
  const found: RuleShape[] = [];
  for (const earlier of shapes.slice(0, index)) {
    if (remaining.length === 0) break;
    if (!remaining.some((piece) => earlier.boxes.some((box) => algebra.overlaps(piece, box)))) continue;
    found.push(earlier);
    remaining = algebra.subtractAll(remaining, earlier.boxes);
  }
  return found;
}

export function checkNonVacuity(policy: PolicyDefinition, options: { property?: string } = {}): VacuousRule[] {
  const space = factSpace(policy);
  const vacuous: VacuousRule[] = [];
  for (const [property, shapes] of selectShapes(space, options.property)) {
    shapes.forEach((shape, index) => {
      if (shape.boxes.length === 0) {
        vacuous.push({ property, rule: shape.rule.name, reason: "never_matches", overriddenBy: [] });
        return;
      }
      if (winningRegion(space.algebra, shapes, index)) return;
      const by = deciders(space.algebra, shapes, index);
      const same = by.every((d) => d.rule.then.value === shape.rule.then.value);
      vacuous.push({
        property,
        rule: shape.rule.name,
        reason: same ? "redundant" : "overridden",
        overriddenBy: by.map((d) => d.rule.name),
      });
    });
  }
  return vacuous;
}

/** For each rule, one region where it is the deciding rule (null if vacuous); for the UI. */
export function ruleCoverage(policy: PolicyDefinition, property?: string): { property: string; rule: string; wins: Region | null }[] {
  const space = factSpace(policy);
  return selectShapes(space, property).flatMap(([name, shapes]) =>
    shapes.map((shape, index) => {
      const box = winningRegion(space.algebra, shapes, index);
      return { property: name, rule: shape.rule.name, wins: box ? describeBox(space, box) : null };
    }),
  );
}
