"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { toast } from "sonner";
import { ListPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { RunStatusBadge } from "@/components/runs/status-badge";
import { ActionButton } from "@/components/ui/action-button";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { FilterInput, FilterSelect } from "@/components/ui/filter-controls";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { APPROVAL_MODE_LABELS } from "@/server/domain/stacks/schemas";
import { filterStacks, stackFilterParsers } from "./filters";

// Every stack: model, adapter, approval mode, how many trigger rules use it and its last run,
// with edit, clone and archive. Who may change which stack: server/domain/stacks/permissions.ts.

const columns = ["Stack", "Model", "Adapter", "Approval", "Used by", "Last run", { label: "Actions", srOnly: true }];

export function StacksList() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.stacks.list.queryOptions());
  const [filters, setFilters] = useQueryStates(stackFilterParsers, { history: "push" });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.stacks.list.queryKey() });
  const archive = useMutation(
    trpc.stacks.archive.mutationOptions({
      onSuccess: () => {
        toast.success("Stack archived");
        void refresh();
      },
      onError: (e) => toast.error(e.message),
    }),
  );
  const restore = useMutation(
    trpc.stacks.restore.mutationOptions({
      onSuccess: () => {
        toast.success("Stack restored");
        void refresh();
      },
      onError: (e) => toast.error(e.message),
    }),
  );

  if (list.isPending) return <ListPageSkeleton label="Loading the stacks" filters={0} columns={6} />;
  if (list.error) return <Alert>{list.error.message}</Alert>;
  const { canCreate } = list.data;
  const stacks = filterStacks(list.data.stacks, filters);
  const filtered = filters.q !== null || filters.show !== null;

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Agent stacks</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            What a run gets: model, adapter, tools, MCP servers, skills, subagents, approval mode and prompt. Every save is a new version; runs keep
            the version they used.
          </p>
        </div>
        {canCreate.allowed ? (
          <Link href="/stacks/new" className={buttonVariants({ variant: "primary" })}>
            New stack
          </Link>
        ) : (
          <ActionButton variant="primary" disabledReason={canCreate.reason}>
            New stack
          </ActionButton>
        )}
      </div>
      <div role="search" aria-label="Filter stacks" className="flex flex-wrap items-center gap-2">
        <FilterInput type="search" aria-label="Search stacks" placeholder="Name, description or model" value={filters.q} onCommit={(q) => void setFilters({ q }, { history: "replace" })} className="w-64" />
        <FilterSelect
          label="Archived"
          allLabel="Active and archived"
          value={filters.show}
          onChange={(show) => void setFilters({ show })}
          options={[
            { value: "active", label: "Active only" },
            { value: "archived", label: "Archived only" },
          ]}
        />
      </div>
      <Table columns={columns} data-testid="stacks-table" empty={stacks.length > 0 ? null : filtered ? "No stacks match these filters." : "No stacks yet."}>
        {stacks.map((s) => (
          <tr key={s.id} className={cn(s.archivedAt && "opacity-60")} data-testid={`stack-row-${s.name}`}>
            <td>
              <Link href={`/stacks/${s.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-400">
                {s.name}
              </Link>{" "}
              <Badge tone="muted">v{s.version}</Badge> {s.archivedAt && <Badge tone="warning">archived</Badge>}
              {s.description && <p className="max-w-md truncate text-xs text-zinc-500" title={s.description}>{s.description}</p>}
            </td>
            <td className="font-mono text-xs">
              {s.modelProvider}/{s.model}
            </td>
            <td>
              {s.adapter === "scripted" ? <Badge tone="info" title="Replays a recorded scenario: demo and tests only">scripted (demo)</Badge> : <Badge>{s.adapter}</Badge>}
            </td>
            <td className="text-xs" title={APPROVAL_MODE_LABELS[s.approvalMode]}>
              {s.approvalMode === "always" ? "always" : "exceptions allowed"}
            </td>
            <td className="text-xs">
              {s.usedByRules} trigger rule{s.usedByRules === 1 ? "" : "s"}
            </td>
            <td className="text-xs">
              {s.lastRun ? (
                <Link href={`/runs/${s.lastRun.id}`} className="inline-flex items-center gap-1.5 hover:underline">
                  #{s.lastRun.number} <RunStatusBadge status={s.lastRun.status} /> <RelativeTime date={s.lastRun.createdAt} />
                </Link>
              ) : (
                <span className="text-zinc-500">never</span>
              )}
            </td>
            <td>
              <div className="flex justify-end gap-1">
                <Link href={`/stacks/${s.id}`} className={buttonVariants({ size: "sm", variant: "ghost" })}>
                  {s.archivedAt ? "View" : "Edit"}
                </Link>
                {canCreate.allowed ? (
                  <Link href={`/stacks/new?clone=${s.id}`} className={buttonVariants({ size: "sm", variant: "ghost" })} aria-label={`Clone ${s.name}`}>
                    Clone
                  </Link>
                ) : (
                  <ActionButton size="sm" variant="ghost" disabledReason={canCreate.reason} aria-label={`Clone ${s.name}`}>
                    Clone
                  </ActionButton>
                )}
                {s.archivedAt ? (
                  <ActionButton size="sm" variant="ghost" disabledReason={restore.isPending ? "Restoring…" : null} onClick={() => restore.mutate({ stackId: s.id })} aria-label={`Restore ${s.name}`}>
                    Restore
                  </ActionButton>
                ) : (
                  <ActionButton
                    size="sm"
                    variant="ghost"
                    disabledReason={archive.isPending ? "Archiving…" : null}
                    aria-label={`Archive ${s.name}`}
                    onClick={() => {
                      if (window.confirm(`Archive ${s.name}? It leaves the pickers; runs keep their snapshots.`)) archive.mutate({ stackId: s.id });
                    }}
                  >
                    Archive
                  </ActionButton>
                )}
              </div>
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
