import { parseAsStringLiteral } from "nuqs/server";
import { parseAsText } from "@/components/ui/url-filters";
import { TRIGGER_KINDS } from "@/server/domain/ci-events/schemas";

// The trigger rules list's filters in the URL. The list is loaded whole; the filter narrows it.

/** The repository filter's value for rules that apply to every repository. */
export const EVERY_REPOSITORY = "every";

export const ruleFilterParsers = { q: parseAsText(100), kind: parseAsStringLiteral(TRIGGER_KINDS), repositoryId: parseAsText(100) };

type RuleFilter = { q: string | null; kind: (typeof TRIGGER_KINDS)[number] | null; repositoryId: string | null };
type Filterable = { name: string; kind: string; repository: { id: string } | null; stack: { name: string } };

/** The rules these filters keep: the text is in the rule's or its stack's name (any case). */
export function filterRules<T extends Filterable>(rules: readonly T[], f: RuleFilter): T[] {
  const q = f.q?.toLowerCase();
  return rules.filter(
    (r) =>
      (f.kind === null || r.kind === f.kind) &&
      (f.repositoryId === null || (f.repositoryId === EVERY_REPOSITORY ? r.repository === null : r.repository?.id === f.repositoryId)) &&
      (!q || r.name.toLowerCase().includes(q) || r.stack.name.toLowerCase().includes(q)),
  );
}
