"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { formatRelative, formatUsd, shortSha, taskKindLabel } from "@/components/ui/format";
import { RunSource, RunStatus, TaskKind } from "@/server/db/generated/enums";
import { runFiltersToSearch, runListInput, withoutStatus, type RunFilters } from "./filters";
import { RunStatusBadge, runStatusLabel } from "./status-badge";
import { Suggestions } from "./suggestions";
import { useRunStatusStream } from "./use-run-status-stream";

const selectClass = "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900";
const words = (s: string) => s.replaceAll("_", " ");

export function RunsList({ filters }: { filters: RunFilters }) {
  const trpc = useTRPC();
  const router = useRouter();
  const live = useRunStatusStream();
  const runs = useInfiniteQuery(trpc.runs.list.infiniteQueryOptions(runListInput(filters), { getNextPageParam: (last) => last.nextCursor }));
  const counts = useQuery(trpc.runs.counts.queryOptions(withoutStatus(filters)));
  const repos = useQuery(trpc.repositories.mine.queryOptions());
  const options = useQuery(trpc.runs.filterOptions.queryOptions());
  const setFilters = (next: RunFilters) => router.push(`/runs${runFiltersToSearch(next)}`);
  const items = runs.data?.pages.flatMap((p) => p.items) ?? [];
  const total = counts.data ? Object.values(counts.data).reduce((a, b) => a + b, 0) : undefined;

  // Text search follows typing, a moment after it stops.
  const [q, setQ] = useState(filters.q ?? "");
  useEffect(() => {
    const next = q.trim() || undefined;
    if (next === filters.q) return;
    const t = setTimeout(() => router.replace(`/runs${runFiltersToSearch({ ...filters, q: next })}`), 300);
    return () => clearTimeout(t);
  }, [q, filters, router]);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Runs</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Agent dispatches from failed checks, comments, labels, releases and scans.{" "}
            <span className="inline-flex items-center gap-1" data-testid="list-live">
              <span aria-hidden className={cn("size-1.5 rounded-full", live === "live" ? "bg-emerald-500" : "bg-zinc-400")} />
              {live === "live" ? "Live" : "Connecting…"}
            </span>
          </p>
        </div>
      </div>

      <div role="search" aria-label="Filter runs" className="flex flex-wrap items-center gap-2">
        <input
          type="search"
          aria-label="Search runs by title or source"
          placeholder="Search title, PR, check, branch, #number"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          className="h-8 w-72 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900"
        />
        <select aria-label="Repository" className={selectClass} value={filters.repositoryId ?? ""} onChange={(e) => setFilters({ ...filters, repositoryId: e.target.value || undefined })}>
          <option value="">All repositories</option>
          {repos.data?.map((r) => (
            <option key={r.id} value={r.id}>
              {r.fullName}
            </option>
          ))}
        </select>
        <select aria-label="Source" className={selectClass} value={filters.source ?? ""} onChange={(e) => setFilters({ ...filters, source: (e.target.value || undefined) as RunSource | undefined })}>
          <option value="">All sources</option>
          {Object.values(RunSource).map((s) => (
            <option key={s} value={s}>
              {words(s)}
            </option>
          ))}
        </select>
        <select aria-label="Task kind" className={selectClass} value={filters.taskKind ?? ""} onChange={(e) => setFilters({ ...filters, taskKind: (e.target.value || undefined) as TaskKind | undefined })}>
          <option value="">All task kinds</option>
          {Object.values(TaskKind).map((k) => (
            <option key={k} value={k}>
              {taskKindLabel[k]}
            </option>
          ))}
        </select>
        <select aria-label="Stack" className={selectClass} value={filters.stackId ?? ""} onChange={(e) => setFilters({ ...filters, stackId: e.target.value || undefined })}>
          <option value="">All stacks</option>
          {options.data?.stacks.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
        <select aria-label="Actor" className={selectClass} value={filters.actor ?? ""} onChange={(e) => setFilters({ ...filters, actor: e.target.value || undefined })}>
          <option value="">All actors</option>
          {(options.data?.actors ?? (filters.actor ? [filters.actor] : [])).map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>

      <nav aria-label="Filter by status" className="flex flex-wrap gap-1.5">
        <StatusChip active={!filters.status} onClick={() => setFilters({ ...filters, status: undefined })} label="All" count={total} />
        {Object.values(RunStatus).map((s) => (
          <StatusChip key={s} active={filters.status === s} onClick={() => setFilters({ ...filters, status: s })} label={runStatusLabel[s]} count={counts.data?.[s]} />
        ))}
      </nav>

      {filters.status === undefined && <Suggestions filters={filters} />}

      <div className="overflow-hidden rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table className="w-full text-sm">
          <thead className="border-b border-zinc-200 bg-zinc-50 text-left text-xs text-zinc-600 uppercase dark:border-zinc-800 dark:bg-zinc-900/60 dark:text-zinc-400">
            <tr>
              <th className="px-3 py-2 font-medium">Run</th>
              <th className="px-3 py-2 font-medium">Status</th>
              <th className="hidden px-3 py-2 font-medium md:table-cell">Repository</th>
              <th className="hidden px-3 py-2 font-medium lg:table-cell">Task</th>
              <th className="hidden px-3 py-2 font-medium lg:table-cell">Stack</th>
              <th className="hidden px-3 py-2 font-medium xl:table-cell">Ref</th>
              <th className="hidden px-3 py-2 text-right font-medium md:table-cell">Cost</th>
              <th className="px-3 py-2 text-right font-medium">Created</th>
            </tr>
          </thead>
          <tbody data-testid="runs-table" className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {items.map((run) => (
              <tr key={run.id} className="hover:bg-zinc-50 dark:hover:bg-zinc-800/50">
                <td className="max-w-md px-3 py-2">
                  <Link href={`/runs/${run.id}`} className="font-medium text-zinc-900 hover:text-indigo-700 dark:text-zinc-100 dark:hover:text-indigo-300">
                    <span className="mr-1.5 font-mono text-xs text-zinc-500 dark:text-zinc-400">#{run.number}</span>
                    {run.title}
                  </Link>
                  <div className="truncate text-xs text-zinc-600 dark:text-zinc-400">
                    {words(run.source)} by {run.actor}
                    {run.pullRequest && ` · PR #${run.pullRequest.number}`}
                    {run.isFork && <span className="ml-1 text-amber-800 dark:text-amber-300">· {run.origin === "unknown" ? "unknown origin" : "fork"}</span>}
                  </div>
                </td>
                <td className="px-3 py-2">
                  <RunStatusBadge status={run.status} />
                </td>
                <td className="hidden px-3 py-2 text-zinc-700 md:table-cell dark:text-zinc-300">{run.repository.fullName}</td>
                <td className="hidden px-3 py-2 lg:table-cell">{taskKindLabel[run.taskKind]}</td>
                <td className="hidden px-3 py-2 font-mono text-xs lg:table-cell">{run.stackName ?? "—"}</td>
                <td className="hidden px-3 py-2 font-mono text-xs text-zinc-600 xl:table-cell dark:text-zinc-400">
                  {run.headBranch ?? "—"} @ {shortSha(run.headSha)}
                </td>
                <td className="hidden px-3 py-2 text-right tabular-nums md:table-cell">{formatUsd(run.costUsd)}</td>
                <td className="px-3 py-2 text-right text-xs text-zinc-600 dark:text-zinc-400" title={run.createdAt.toISOString()} suppressHydrationWarning>
                  {formatRelative(run.createdAt)}
                </td>
              </tr>
            ))}
            {items.length === 0 && !runs.isPending && (
              <tr>
                <td colSpan={8} className="px-3 py-10 text-center text-zinc-600 dark:text-zinc-400">
                  No runs match these filters.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {runs.hasNextPage && (
        <div className="flex justify-center">
          <Button onClick={() => runs.fetchNextPage()} disabled={runs.isFetchingNextPage}>
            {runs.isFetchingNextPage ? "Loading…" : "Load more"}
          </Button>
        </div>
      )}
    </div>
  );
}

function StatusChip(props: { active: boolean; onClick: () => void; label: string; count?: number }) {
  return (
    <button
      type="button"
      onClick={props.onClick}
      aria-pressed={props.active}
      className={cn(
        "rounded-full border px-2.5 py-1 text-xs",
        props.active
          ? "border-indigo-600 bg-indigo-600 text-white"
          : "border-zinc-300 bg-white text-zinc-700 hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-300",
      )}
    >
      {props.label}
      {props.count !== undefined && <span className="ml-1 tabular-nums opacity-80">{props.count}</span>}
    </button>
  );
}

