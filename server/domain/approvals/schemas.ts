// Shapes a write-back request carries beyond its target, shared by the gate, the executor and the
// approval screen (components may import `**/schemas`). Nothing here needs Node.
import { z } from "zod";

/** The labels a `set_labels` write-back adds to and removes from one pull request. */
export const zLabelChange = z
  .object({
    add: z.array(z.string().trim().min(1).max(50)).max(10),
    remove: z.array(z.string().trim().min(1).max(50)).max(10),
  })
  .refine((c) => c.add.length + c.remove.length > 0, "A label change adds or removes at least one label")
  .refine((c) => !c.add.some((l) => c.remove.includes(l)), "A label cannot be added and removed at once");
export type LabelChange = z.infer<typeof zLabelChange>;

/**
 * What a set_labels request shows its approver: the PR and the labels added and removed, read
 * from the frozen `presented` JSON. Null when the request carries no valid label change (never
 * a guess: the screen then says so instead of showing something it cannot vouch for).
 */
export function presentedLabelChange(presented: unknown): { prNumber: number | null; add: string[]; remove: string[] } | null {
  const p = presented && typeof presented === "object" ? (presented as { labels?: unknown; target?: { prNumber?: unknown } }) : null;
  const parsed = zLabelChange.safeParse(p?.labels);
  if (!parsed.success) return null;
  const pr = p?.target?.prNumber;
  return { prNumber: typeof pr === "number" && Number.isInteger(pr) ? pr : null, add: parsed.data.add, remove: parsed.data.remove };
}
