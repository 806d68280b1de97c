import { parseAsStringLiteral } from "nuqs/server";
import { parseAsText } from "@/components/ui/url-filters";

// The stacks list's filters in the URL. The list is loaded whole; the filter narrows what it shows.

export const stackFilterParsers = { q: parseAsText(100), show: parseAsStringLiteral(["active", "archived"] as const) };

type StackFilter = { q: string | null; show: "active" | "archived" | null };
type Filterable = { name: string; description: string; model: string; archivedAt: Date | null };

/** The stacks these filters keep: name, description or model contains the text (any case). */
export function filterStacks<T extends Filterable>(stacks: readonly T[], f: StackFilter): T[] {
  const q = f.q?.toLowerCase();
  return stacks.filter(
    (s) =>
      (f.show === null || (f.show === "archived") === (s.archivedAt !== null)) &&
      (!q || [s.name, s.description, s.model].some((t) => t.toLowerCase().includes(q))),
  );
}
