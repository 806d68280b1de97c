"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { ListPageSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { FilterInput, FilterSelect } from "@/components/ui/filter-controls";
import { taskKindLabel } from "@/components/ui/format";
import { Table } from "@/components/ui/table";
import { TRIGGER_KINDS } from "@/server/domain/ci-events/schemas";
import { EVERY_REPOSITORY, filterRules, ruleFilterParsers } from "./filters";
import { KIND_LABELS } from "./rule-form";

// Trigger rules the user can see (their repositories' and the ones for every repository): what
// each matches, the stack it starts, the task kind and action, and how many runs it made.

const columns = ["Rule", "Kind", "Repository", "Matches", "Stack", "Task, action", "Runs"];

export function RulesList() {
  const trpc = useTRPC();
  const list = useQuery(trpc.triggers.list.queryOptions());
  const [filters, setFilters] = useQueryStates(ruleFilterParsers, { history: "push" });
  if (list.isPending) return <ListPageSkeleton label="Loading the trigger rules" filters={0} columns={7} />;
  if (list.error) return <Alert>{list.error.message}</Alert>;
  const { canCreate } = list.data;
  const rules = filterRules(list.data.rules, filters);
  const filtered = filters.q !== null || filters.kind !== null || filters.repositoryId !== null;
  const repositories = [...new Map(list.data.rules.flatMap((r) => (r.repository ? [[r.repository.id, r.repository.fullName] as const] : []))).entries()];
  const keys = (r: (typeof rules)[number]) =>
    [
      r.workflow && `workflow ${r.workflow}`,
      r.job && `job ${r.job}`,
      r.step && `step ${r.step}`,
      r.branchGlob && `${r.kind === "release" ? "tag" : "branch"} ${r.branchGlob}`,
      r.pathFilters.length > 0 && `paths ${r.pathFilters.join(", ")}`,
      r.failureSignature && `signature ${r.failureSignature}`,
      r.releaseVersion && `version ${r.releaseVersion}`,
      r.releaseChart && `chart ${r.releaseChart}`,
      r.releaseNpmPackage && `npm ${r.releaseNpmPackage}`,
      r.releaseImage && `image ${r.releaseImage}`,
      r.releaseChecksum && `checksum ${r.releaseChecksum}`,
      r.releaseBranch && `release branch ${r.releaseBranch}`,
    ].filter(Boolean) as string[];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Trigger rules</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">Which CI events dispatch which stack, for which task, and whether the run starts by itself.</p>
        </div>
        {canCreate ? (
          <Link href="/triggers/new" className={buttonVariants({ variant: "primary" })}>New rule</Link>
        ) : (
          <ActionButton variant="primary" disabledReason="Creating a trigger rule needs the maintainer role on a repository.">New rule</ActionButton>
        )}
      </div>
      <div role="search" aria-label="Filter trigger rules" className="flex flex-wrap items-center gap-2">
        <FilterInput type="search" aria-label="Search trigger rules" placeholder="Rule or stack name" value={filters.q} onCommit={(q) => void setFilters({ q }, { history: "replace" })} className="w-64" />
        <FilterSelect label="Kind" allLabel="All kinds" value={filters.kind} onChange={(kind) => void setFilters({ kind })} options={TRIGGER_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k] }))} />
        <FilterSelect
          label="Repository"
          allLabel="All repositories"
          value={filters.repositoryId}
          onChange={(repositoryId) => void setFilters({ repositoryId })}
          options={[{ value: EVERY_REPOSITORY, label: "Rules for every repository" }, ...repositories.map(([value, label]) => ({ value, label }))]}
        />
      </div>
      <Table columns={columns} data-testid="rules-table" empty={rules.length > 0 ? null : filtered ? "No trigger rules match these filters." : "No trigger rules yet."}>
        {rules.map((r) => (
          <tr key={r.id} className={cn(!r.enabled && "opacity-60")}>
            <td>
              <Link href={`/triggers/${r.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-400">{r.name}</Link>{" "}
              {!r.enabled && <Badge tone="muted">disabled</Badge>} {!r.canEdit && <Badge tone="muted" title="You may view this rule, not change it">read-only</Badge>}
            </td>
            <td className="text-xs">{KIND_LABELS[r.kind]}</td>
            <td className="text-xs">{r.repository?.fullName ?? <span className="text-zinc-500">every repository</span>}</td>
            <td className="text-xs">{keys(r).join(" · ") || <span className="text-zinc-500">anything</span>}</td>
            <td className="text-xs">
              <Link href={`/stacks/${r.stack.id}`} className="hover:underline">{r.stack.name}</Link>
              {r.stack.archivedAt && <Badge tone="warning" className="ml-1">archived</Badge>}
            </td>
            <td className="text-xs">
              {taskKindLabel[r.taskKind]}, {r.action === "auto_run" ? "auto-run" : "suggest"}
            </td>
            <td className="text-xs">{r._count.runs}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
