import type { PolicyDefinition, Scalar } from "../model";
import { describeBox, type Region } from "./region";
import { factSpace, selectShapes } from "./space";

// A gap is a region of the fact space no rule covers. The fail-closed default decides there,
// so a gap is not unsafe, but it is a case nobody wrote a rule for and worth naming.

export type PolicyGap = {
  property: string;
  region: Region;
  /** What decides inside the gap today: the property's default. */
  fallback: { value: Scalar; explanation: string };
};

export function checkCompleteness(policy: PolicyDefinition, options: { property?: string } = {}): PolicyGap[] {
  const space = factSpace(policy);
  const { algebra } = space;
  const gaps: PolicyGap[] = [];
  for (const [property, shapes] of selectShapes(space, options.property)) {
    const decided = space.compiled.decisions.get(property);
    if (!decided) continue;
    // Cutting with the largest regions first leaves fewer, larger fragments.
    const cutters = shapes
      .flatMap((shape) => shape.boxes)
      .map((box) => ({ box, size: algebra.volume(box) }))
      .sort((a, b) => b.size - a.size)
      .map(({ box }) => box);
    const uncovered = algebra.merge(algebra.subtractAll([algebra.universe], cutters));
    for (const box of uncovered) {
      gaps.push({
        property,
        region: describeBox(space, box),
        fallback: { value: decided.fallback.value, explanation: decided.fallback.explanation },
      });
    }
  }
  return gaps;
}
