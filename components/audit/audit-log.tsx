"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { useTRPC } from "@/components/providers/trpc";
import { FilterInput } from "@/components/ui/filter-controls";
import { LoadMore } from "@/components/ui/load-more";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { auditFilterParsers, auditListInput } from "./filters";
import { auditDetail, auditVerb } from "./sentence";

const columns = ["When", "What happened", { label: "Repository", className: "hidden lg:table-cell" }];

export function AuditLog() {
  const trpc = useTRPC();
  const [values, setFilters] = useQueryStates(auditFilterParsers, { history: "replace" });
  const q = useInfiniteQuery(trpc.audit.list.infiniteQueryOptions(auditListInput(values), { getNextPageParam: (last) => last.nextCursor }));
  const items = q.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Audit log</h1>
          <p className="text-sm text-zinc-500">Every change a person made: who, what, when, to which object.</p>
        </div>
        <div className="flex gap-2">
          <FilterInput aria-label="Filter by actor" placeholder="Actor" value={values.actor} onCommit={(actor) => void setFilters({ actor })} />
          <FilterInput aria-label="Filter by action" placeholder="Action (e.g. run.)" value={values.action} onCommit={(action) => void setFilters({ action })} />
        </div>
      </div>
      <Table columns={columns} bodyTestId="audit-table" empty={items.length === 0 && !q.isPending ? "No audit entries match." : null}>
        {items.map((e) => {
          const detail = auditDetail(e.detail);
          return (
            <tr key={e.id} data-action={e.action}>
              <td className="whitespace-nowrap text-zinc-600 dark:text-zinc-400">
                <RelativeTime date={e.createdAt} />
              </td>
              <td className="text-sm">
                <span className="font-medium">{e.actorName ?? e.actor}</span> {auditVerb(e.action)}{" "}
                {e.object.href ? (
                  <Link className="text-indigo-600 hover:underline dark:text-indigo-400" href={e.object.href}>
                    {e.object.label}
                  </Link>
                ) : (
                  <span>{e.object.label}</span>
                )}
                {detail && <span className="block text-xs break-words text-zinc-600 dark:text-zinc-400">{detail}</span>}
              </td>
              <td className="hidden text-xs text-zinc-600 lg:table-cell dark:text-zinc-400">{e.repositoryName ?? "all repositories"}</td>
            </tr>
          );
        })}
      </Table>
      <LoadMore query={q} />
    </div>
  );
}
