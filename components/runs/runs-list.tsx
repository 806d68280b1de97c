"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { useTRPC } from "@/components/providers/trpc";
import { cn } from "@/components/ui/cn";
import { FilterInput, FilterSelect } from "@/components/ui/filter-controls";
import { formatCost, formatUsd, shortSha, taskKindLabel } from "@/components/ui/format";
import { LoadMore } from "@/components/ui/load-more";
import { Table, TableRow } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { toInput } from "@/components/ui/url-filters";
import { RunSource, RunStatus, TaskKind } from "@/server/db/generated/enums";
import { runFilterParsers, runListInput, withoutStatus } from "./filters";
import { RunStatusBadge, runStatusLabel } from "./status-badge";
import { ManualDispatchButton } from "./manual-dispatch-dialog";
import { Suggestions } from "./suggestions";
import { useRunStatusStream } from "./use-run-status-stream";

const words = (s: string) => s.replaceAll("_", " ");
const columns = [
  "Run",
  "Status",
  { label: "Repository", className: "hidden md:table-cell" },
  { label: "Task", className: "hidden lg:table-cell" },
  { label: "Stack", className: "hidden lg:table-cell" },
  { label: "Ref", className: "hidden xl:table-cell" },
  { label: "Cost", className: "hidden text-right md:table-cell" },
  { label: "Created", className: "text-right" },
];

export function RunsList() {
  const trpc = useTRPC();
  const live = useRunStatusStream();
  const [values, setFilters] = useQueryStates(runFilterParsers, { history: "push" });
  const filters = toInput(values);
  const runs = useInfiniteQuery(trpc.runs.list.infiniteQueryOptions(runListInput(filters), { getNextPageParam: (last) => last.nextCursor }));
  const counts = useQuery(trpc.runs.counts.queryOptions(withoutStatus(filters)));
  const repos = useQuery(trpc.repositories.mine.queryOptions());
  const options = useQuery(trpc.runs.filterOptions.queryOptions());
  const items = runs.data?.pages.flatMap((p) => p.items) ?? [];
  const total = counts.data ? Object.values(counts.data).reduce((a, b) => a + b, 0) : undefined;

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
        <ManualDispatchButton repositories={repos.data ?? []} repositoryId={values.repositoryId ?? undefined} />
      </div>

      <div role="search" aria-label="Filter runs" className="flex flex-wrap items-center gap-2">
        <FilterInput
          type="search"
          aria-label="Search runs by title or source"
          placeholder="Search title, PR, check, branch, #number"
          value={values.q}
          onCommit={(q) => void setFilters({ q }, { history: "replace" })}
          className="w-72"
        />
        <FilterSelect label="Repository" allLabel="All repositories" value={values.repositoryId} onChange={(repositoryId) => void setFilters({ repositoryId })} options={(repos.data ?? []).map((r) => ({ value: r.id, label: r.fullName }))} />
        <FilterSelect label="Source" allLabel="All sources" value={values.source} onChange={(source) => void setFilters({ source })} options={Object.values(RunSource).map((s) => ({ value: s, label: words(s) }))} />
        <FilterSelect label="Task kind" allLabel="All task kinds" value={values.taskKind} onChange={(taskKind) => void setFilters({ taskKind })} options={Object.values(TaskKind).map((k) => ({ value: k, label: taskKindLabel[k] ?? k }))} />
        <FilterSelect label="Stack" allLabel="All stacks" value={values.stackId} onChange={(stackId) => void setFilters({ stackId })} options={(options.data?.stacks ?? []).map((s) => ({ value: s.id, label: s.name }))} />
        <FilterSelect
          label="Actor"
          allLabel="All actors"
          value={values.actor}
          onChange={(actor) => void setFilters({ actor })}
          options={(options.data?.actors ?? (values.actor ? [values.actor] : [])).map((a) => ({ value: a, label: a }))}
        />
      </div>

      <nav aria-label="Filter by status" className="flex flex-wrap gap-1.5">
        <StatusChip active={!filters.status} onClick={() => void setFilters({ status: null })} label="All" count={total} />
        {Object.values(RunStatus).map((s) => (
          <StatusChip key={s} active={filters.status === s} onClick={() => void setFilters({ status: s })} label={runStatusLabel[s]} count={counts.data?.[s]} />
        ))}
      </nav>

      {filters.status === undefined && <Suggestions filters={filters} />}

      <Table columns={columns} bodyTestId="runs-table" empty={items.length === 0 && !runs.isPending ? "No runs match these filters." : null}>
        {items.map((run) => (
          <TableRow key={run.id} interactive>
            <td className="max-w-md">
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
            <td>
              <RunStatusBadge status={run.status} />
            </td>
            <td className="hidden text-zinc-700 md:table-cell dark:text-zinc-300">{run.repository.fullName}</td>
            <td className="hidden lg:table-cell">{taskKindLabel[run.taskKind]}</td>
            <td className="hidden font-mono text-xs lg:table-cell">{run.stackName ?? "—"}</td>
            <td className="hidden font-mono text-xs text-zinc-600 xl:table-cell dark:text-zinc-400">
              {run.headBranch ?? "—"} @ {shortSha(run.headSha)}
            </td>
            <td className="hidden text-right tabular-nums md:table-cell">{run.costUnknown ? <span title={formatCost(run.costUsd, run.costUnknown)}>unknown</span> : formatUsd(run.costUsd)}</td>
            <td className="text-right text-xs text-zinc-600 dark:text-zinc-400">
              <RelativeTime date={run.createdAt} />
            </td>
          </TableRow>
        ))}
      </Table>
      <LoadMore query={runs} />
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

