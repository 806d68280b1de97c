import { createLoader, createSerializer, parseAsStringEnum } from "nuqs/server";
import { parseAsText, toInput } from "@/components/ui/url-filters";
import { RunSource, RunStatus, TaskKind } from "@/server/db/generated/enums";

/** The runs list's filters in the URL; unknown values are ignored rather than erroring. */
export const runFilterParsers = {
  repositoryId: parseAsText(100),
  status: parseAsStringEnum<RunStatus>(Object.values(RunStatus)),
  taskKind: parseAsStringEnum<TaskKind>(Object.values(TaskKind)),
  source: parseAsStringEnum<RunSource>(Object.values(RunSource)),
  stackId: parseAsText(100),
  actor: parseAsText(200),
  q: parseAsText(200),
};

export type RunFilters = {
  repositoryId?: string;
  status?: RunStatus;
  taskKind?: TaskKind;
  source?: RunSource;
  stackId?: string;
  actor?: string;
  q?: string;
};

const load = createLoader(runFilterParsers);

/** Filters from the page's search params (the server page prefetches with these). */
export function parseRunFilters(params: Record<string, string | string[] | undefined>): RunFilters {
  return toInput(load(params));
}

export const runFiltersToSearch: (f: RunFilters) => string = createSerializer(runFilterParsers);

/** The filters without the status (what the status chips count under). */
export function withoutStatus(f: RunFilters): Omit<RunFilters, "status"> {
  const { status: _status, ...rest } = f;
  return rest;
}

/** The list query's input for these filters (the page prefetches exactly this). */
export const runListInput = (filters: RunFilters) => ({ ...filters, limit: 25 });

/** The suggestions strip: open suggestions under the same filters. */
export const suggestionsInput = (filters: RunFilters) => ({ ...withoutStatus(filters), status: "suggested" as const, limit: 10 });
