import { RunSource, RunStatus, TaskKind } from "@/server/db/generated/enums";

export type RunFilters = {
  repositoryId?: string;
  status?: RunStatus;
  taskKind?: TaskKind;
  source?: RunSource;
  stackId?: string;
  actor?: string;
  q?: string;
};

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const text = (v: string | undefined, max: number) => {
  const t = v?.trim();
  return t ? t.slice(0, max) : undefined;
};

/** Filters from the URL; unknown values are ignored rather than erroring. */
export function parseRunFilters(params: Record<string, string | string[] | undefined>): RunFilters {
  const status = one(params.status);
  const taskKind = one(params.taskKind);
  const source = one(params.source);
  return {
    status: status && status in RunStatus ? (status as RunStatus) : undefined,
    taskKind: taskKind && taskKind in TaskKind ? (taskKind as TaskKind) : undefined,
    source: source && source in RunSource ? (source as RunSource) : undefined,
    repositoryId: text(one(params.repositoryId), 100),
    stackId: text(one(params.stackId), 100),
    actor: text(one(params.actor), 200),
    q: text(one(params.q), 200),
  };
}

const keys = ["repositoryId", "status", "taskKind", "source", "stackId", "actor", "q"] as const;

export function runFiltersToSearch(f: RunFilters): string {
  const p = new URLSearchParams();
  for (const k of keys) {
    const v = f[k];
    if (v) p.set(k, v);
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** The filters without the status (what the status chips count under). */
export function withoutStatus(f: RunFilters): Omit<RunFilters, "status"> {
  const { status: _status, ...rest } = f;
  return rest;
}

/** The list query's input for these filters (the page prefetches exactly this). */
export const runListInput = (filters: RunFilters) => ({ ...filters, limit: 25 });

/** The suggestions strip: open suggestions under the same filters. */
export const suggestionsInput = (filters: RunFilters) => ({ ...withoutStatus(filters), status: "suggested" as const, limit: 10 });
