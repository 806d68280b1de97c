"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Badge } from "@/components/ui/badge";
import { buttonVariants } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { taskKindLabel } from "@/components/ui/format";
import { KIND_LABELS } from "./rule-form";

// Trigger rules the user can see (their repositories' and the ones for every repository): what
// each matches, the stack it starts, the task kind and action, and how many runs it made.

export function RulesList() {
  const trpc = useTRPC();
  const list = useQuery(trpc.triggers.list.queryOptions());
  if (list.isPending) return <p className="text-sm text-zinc-500">Loading trigger rules…</p>;
  if (list.error) return <p role="alert" className="text-sm text-red-600">{list.error.message}</p>;
  const { rules, canCreate } = list.data;
  const keys = (r: (typeof rules)[number]) =>
    [
      r.workflow && `workflow ${r.workflow}`,
      r.job && `job ${r.job}`,
      r.step && `step ${r.step}`,
      r.branchGlob && `${r.kind === "release" ? "tag" : "branch"} ${r.branchGlob}`,
      r.pathFilters.length > 0 && `paths ${r.pathFilters.join(", ")}`,
      r.failureSignature && `signature ${r.failureSignature}`,
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
      <div className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table className="w-full text-left text-sm" data-testid="rules-table">
          <thead className="border-b border-zinc-200 text-xs text-zinc-500 dark:border-zinc-800">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">Rule</th>
              <th scope="col" className="px-3 py-2 font-medium">Kind</th>
              <th scope="col" className="px-3 py-2 font-medium">Repository</th>
              <th scope="col" className="px-3 py-2 font-medium">Matches</th>
              <th scope="col" className="px-3 py-2 font-medium">Stack</th>
              <th scope="col" className="px-3 py-2 font-medium">Task, action</th>
              <th scope="col" className="px-3 py-2 font-medium">Runs</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {rules.map((r) => (
              <tr key={r.id} className={cn(!r.enabled && "opacity-60")}>
                <td className="px-3 py-2">
                  <Link href={`/triggers/${r.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-400">{r.name}</Link>{" "}
                  {!r.enabled && <Badge tone="muted">disabled</Badge>} {!r.canEdit && <Badge tone="muted" title="You may view this rule, not change it">read-only</Badge>}
                </td>
                <td className="px-3 py-2 text-xs">{KIND_LABELS[r.kind]}</td>
                <td className="px-3 py-2 text-xs">{r.repository?.fullName ?? <span className="text-zinc-500">every repository</span>}</td>
                <td className="px-3 py-2 text-xs">{keys(r).join(" · ") || <span className="text-zinc-500">anything</span>}</td>
                <td className="px-3 py-2 text-xs">
                  <Link href={`/stacks/${r.stack.id}`} className="hover:underline">{r.stack.name}</Link>
                  {r.stack.archivedAt && <Badge tone="warning" className="ml-1">archived</Badge>}
                </td>
                <td className="px-3 py-2 text-xs">
                  {taskKindLabel[r.taskKind]}, {r.action === "auto_run" ? "auto-run" : "suggest"}
                </td>
                <td className="px-3 py-2 text-xs">{r._count.runs}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {rules.length === 0 && <p className="p-4 text-sm text-zinc-500">No trigger rules yet.</p>}
      </div>
    </div>
  );
}
