import type { Scalar } from "../model";
import { describeBox, type Region } from "./region";
import type { Box, BoxAlgebra } from "./boxes";
import { factSpace, selectShapes } from "./space";
import type { PolicyDefinition } from "../model";

// Two rules conflict when some fact set matches both and they conclude different values.
// Priority still picks one, but the overlap is worth seeing: the seed's lesson is that an
// intended overlap and an oversight look the same until a check names them.

export type PolicyConflict = {
  property: string;
  /** Winning order: the first one wins where both match. */
  rules: [string, string];
  conclusions: [Scalar, Scalar];
  picked: string;
  /** "order" when the priorities are equal and listing order breaks the tie. */
  decidedBy: "priority" | "order";
  /** One region where both match, with an example fact set. */
  region: Region;
};

export function checkConflicts(policy: PolicyDefinition, options: { property?: string } = {}): PolicyConflict[] {
  const space = factSpace(policy);
  const conflicts: PolicyConflict[] = [];
  for (const [property, shapes] of selectShapes(space, options.property)) {
    shapes.forEach((first, i) => {
      for (const second of shapes.slice(i + 1)) {
        if (first.rule.then.value === second.rule.then.value) continue;
        const overlap = findOverlap(space.algebra, first.boxes, second.boxes);
        if (!overlap) continue;
        conflicts.push({
          property,
          rules: [first.rule.name, second.rule.name],
          conclusions: [first.rule.then.value, second.rule.then.value],
          picked: first.rule.name,
          decidedBy: first.rule.priority === second.rule.priority ? "order" : "priority",
          region: describeBox(space, overlap),
        });
      }
    });
  }
  return conflicts;
}

function findOverlap(algebra: BoxAlgebra, a: Box[], b: Box[]): Box | null {
  for (const x of a) {
    for (const y of b) {
      const both = algebra.intersect(x, y);
      if (both) return both;
    }
  }
  return null;
}
