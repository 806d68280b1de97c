import type { Scalar } from "../model";
import type { Box } from "./boxes";
import type { CellDescriptor, FactSpace } from "./space";

// Regions as people read them: only the properties a region constrains, each with the cells it
// allows, plus one concrete example fact set that lies inside it.

export type RegionConstraint = { property: string; cells: CellDescriptor[] };

/** Property -> value; a property left out is absent. */
export type Assignment = Record<string, Scalar>;

export type Region = {
  /** Properties not listed may take any value, or be absent. */
  where: RegionConstraint[];
  example: Assignment;
};

export function describeBox(space: FactSpace, box: Box): Region {
  const { algebra } = space;
  const where: RegionConstraint[] = [];
  const example: Assignment = {};
  space.dimensions.forEach((dimension, d) => {
    const cells = algebra.cells(box, d);
    const full = algebra.isFull(box, d);
    if (!full) {
      where.push({ property: dimension.property.name, cells: cells.flatMap((c) => dimension.cells[c] ?? []) });
    }
    // Prefer leaving an unconstrained property absent; otherwise take the region's first cell.
    const absentIndex = dimension.cells.findIndex((cell) => cell.kind === "absent");
    const pick = full && absentIndex >= 0 ? absentIndex : cells[0];
    const value = pick === undefined ? undefined : dimension.representatives[pick];
    if (value !== undefined) example[dimension.property.name] = value;
  });
  return { where, example };
}

function cellContains(cell: CellDescriptor, value: Scalar | undefined): boolean {
  switch (cell.kind) {
    case "absent":
      return value === undefined;
    case "value":
      return value === cell.value;
    case "range":
      return (
        typeof value === "number" &&
        (cell.min === null || value >= cell.min) &&
        (cell.max === null || value <= cell.max)
      );
    case "other":
      return typeof value === "string" && !cell.except.includes(value);
  }
}

/** Whether a concrete fact assignment lies inside a region. */
export function regionContains(region: Pick<Region, "where">, assignment: Assignment): boolean {
  return region.where.every(({ property, cells }) => {
    const value = Object.hasOwn(assignment, property) ? assignment[property] : undefined;
    return cells.some((cell) => cellContains(cell, value));
  });
}

/** One line for logs and messages: "failing_stage ∈ {lint, build} and known_flaky = absent". */
export function formatRegion(region: Pick<Region, "where">): string {
  if (region.where.length === 0) return "every fact set";
  return region.where
    .map(({ property, cells }) =>
      cells.length === 1 ? `${property} = ${cells[0]?.label}` : `${property} ∈ {${cells.map((c) => c.label).join(", ")}}`,
    )
    .join(" and ");
}
