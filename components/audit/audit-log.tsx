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

const columns = ["When", "Actor", "Action", "Object", { label: "Detail", className: "hidden lg:table-cell" }];

/** Where an audited object lives in the console, when it has a page. */
function objectHref(objectType: string, objectId: string): string | null {
  if (objectType === "AgentDispatchRun") return `/runs/${objectId}`;
  if (objectType === "ApprovalRequest") return `/approvals/${objectId}`;
  return null;
}

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
          const href = objectHref(e.objectType, e.objectId);
          return (
            <tr key={e.id}>
              <td className="text-zinc-600 dark:text-zinc-400">
                <RelativeTime date={e.createdAt} />
              </td>
              <td>{e.actor}</td>
              <td className="font-mono text-xs">{e.action}</td>
              <td className="text-xs">
                {href ? (
                  <Link className="text-indigo-600 hover:underline dark:text-indigo-400" href={href}>
                    {e.objectType} {e.objectId.slice(0, 10)}
                  </Link>
                ) : (
                  <span>
                    {e.objectType} {e.objectId.slice(0, 10)}
                  </span>
                )}
              </td>
              <td className="hidden max-w-md truncate font-mono text-xs text-zinc-600 lg:table-cell dark:text-zinc-400">{e.detail ? JSON.stringify(e.detail) : ""}</td>
            </tr>
          );
        })}
      </Table>
      <LoadMore query={q} />
    </div>
  );
}
