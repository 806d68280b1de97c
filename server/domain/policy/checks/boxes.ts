import { AppError } from "@/server/errors";

// Box algebra over the fact space. A box gives each dimension (property) a set of allowed cells,
// stored as 32-bit words so any number of cells fits; most dimensions need one word. Boxes are
// plain number arrays and every operation here is allocation-light: the checks spend their
// time in these few functions.

export type Box = number[];

/** Past this many boxes the checks stop rather than answer approximately. */
export const BOX_LIMIT = 200_000;

export class BoxAlgebra {
  readonly dimensions: number;
  /** Word range of dimension d: [start[d], end[d]). */
  readonly start: number[];
  readonly end: number[];
  readonly universe: Box;

  constructor(readonly cellCounts: number[]) {
    this.dimensions = cellCounts.length;
    this.start = [];
    this.end = [];
    this.universe = [];
    for (const count of cellCounts) {
      this.start.push(this.universe.length);
      for (let left = count; left > 0; left -= 32) {
        this.universe.push(left >= 32 ? -1 : ((1 << left) - 1) | 0);
      }
      this.end.push(this.universe.length);
    }
  }

  /** The universe with dimension `d` narrowed to the given cells. */
  slab(d: number, cells: number[]): Box {
    const box = this.universe.slice();
    for (let w = this.start[d]!; w < this.end[d]!; w++) box[w] = 0;
    for (const cell of cells) {
      const w = this.start[d]! + (cell >> 5);
      box[w] = box[w]! | (1 << (cell & 31));
    }
    return box;
  }

  has(box: Box, d: number, cell: number): boolean {
    return ((box[this.start[d]! + (cell >> 5)] ?? 0) & (1 << (cell & 31))) !== 0;
  }

  cells(box: Box, d: number): number[] {
    const out: number[] = [];
    for (let cell = 0; cell < (this.cellCounts[d] ?? 0); cell++) if (this.has(box, d, cell)) out.push(cell);
    return out;
  }

  isFull(box: Box, d: number): boolean {
    for (let w = this.start[d]!; w < this.end[d]!; w++) if (box[w] !== this.universe[w]) return false;
    return true;
  }

  overlaps(a: Box, b: Box): boolean {
    for (let d = 0; d < this.dimensions; d++) {
      let any = 0;
      for (let w = this.start[d]!; w < this.end[d]!; w++) any |= a[w]! & b[w]!;
      if (any === 0) return false;
    }
    return true;
  }

  intersect(a: Box, b: Box): Box | null {
    if (!this.overlaps(a, b)) return null;
    const out = a.slice();
    for (let w = 0; w < out.length; w++) out[w] = out[w]! & b[w]!;
    return out;
  }

  contains(outer: Box, inner: Box): boolean {
    for (let w = 0; w < outer.length; w++) if ((inner[w]! & ~outer[w]!) !== 0) return false;
    return true;
  }

  /** Appends a \ b to `out` as disjoint boxes, at most one per dimension. */
  subtract(a: Box, b: Box, out: Box[]): void {
    if (!this.overlaps(a, b)) {
      out.push(a);
      return;
    }
    const rest = a.slice();
    for (let d = 0; d < this.dimensions; d++) {
      const from = this.start[d]!;
      const to = this.end[d]!;
      let outside = 0;
      for (let w = from; w < to; w++) outside |= rest[w]! & ~b[w]!;
      if (outside === 0) continue;
      const piece = rest.slice();
      for (let w = from; w < to; w++) {
        piece[w] = rest[w]! & ~b[w]!;
        rest[w] = rest[w]! & b[w]!;
      }
      out.push(piece);
    }
  }

  /** pieces \ (cutters[0] ∪ cutters[1] ∪ ...), as disjoint boxes. */
  subtractAll(pieces: Box[], cutters: Box[]): Box[] {
    let current = pieces;
    for (const cutter of cutters) {
      if (current.length === 0) break;
      const next: Box[] = [];
      for (const piece of current) this.subtract(piece, cutter, next);
      if (next.length > BOX_LIMIT) tooComplex("a subtraction");
      current = next;
    }
    return current;
  }

  /** Number of cell combinations in a box. */
  volume(box: Box): number {
    let size = 1;
    for (let d = 0; d < this.dimensions; d++) {
      let count = 0;
      for (let w = this.start[d]!; w < this.end[d]!; w++) {
        for (let m = box[w]!; m !== 0; m &= m - 1) count++;
      }
      size *= count;
    }
    return size;
  }

  /** Drops boxes contained in another, keeping unions small as conditions are combined. */
  absorb(boxes: Box[]): Box[] {
    if (boxes.length < 2) return boxes;
    return boxes.filter(
      (box, i) =>
        !boxes.some((other, j) => j !== i && this.contains(other, box) && (!this.contains(box, other) || j < i)),
    );
  }

  /**
   * Joins disjoint boxes that differ in one dimension only, until none do. The union is
   * unchanged and stays disjoint; it just reads as fewer, larger regions.
   */
  merge(boxes: Box[]): Box[] {
    let current = boxes;
    let changed = true;
    while (changed && current.length > 1) {
      changed = false;
      for (let d = 0; d < this.dimensions; d++) {
        const from = this.start[d]!;
        const to = this.end[d]!;
        const groups = new Map<string, Box>();
        for (const box of current) {
          const key = box.map((word, w) => (w >= from && w < to ? "*" : word)).join(",");
          const seen = groups.get(key);
          if (seen) {
            for (let w = from; w < to; w++) seen[w] = seen[w]! | box[w]!;
            changed = true;
          } else {
            groups.set(key, box.slice());
          }
        }
        current = [...groups.values()];
      }
    }
    return current;
  }
}

export function tooComplex(what: string): never {
  throw new AppError("UNPROCESSABLE", `policy is too complex to check exactly (${what} exceeds ${BOX_LIMIT} regions)`, {
    reason: "policy_too_complex",
  });
}
