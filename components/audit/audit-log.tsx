"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { LoadMore } from "@/components/ui/load-more";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";

const inputClass =
  "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900";

const columns = ["When", "Actor", "Action", "Object", { label: "Detail", className: "hidden lg:table-cell" }];

/** Where an audited object lives in the console, when it has a page. */
function objectHref(objectType: string, objectId: string): string | null {
  if (objectType === "AgentDispatchRun") return `/runs/${objectId}`;
  if (objectType === "ApprovalRequest") return `/approvals/${objectId}`;
  return null;
}

export function AuditLog() {
  const trpc = useTRPC();
  const [actor, setActor] = useState("");
  const [action, setAction] = useState("");
  const filter = { actor: useDeferredValue(actor) || undefined, action: useDeferredValue(action) || undefined };
  const q = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions({ ...filter, limit: 50 }, { getNextPageParam: (last) => last.nextCursor }),
  );
  const items = q.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Audit log</h1>
          <p className="text-sm text-zinc-500">Every change a person made: who, what, when, to which object.</p>
        </div>
        <div className="flex gap-2">
          <input aria-label="Filter by actor" placeholder="Actor" className={inputClass} value={actor} onChange={(e) => setActor(e.target.value)} />
          <input aria-label="Filter by action" placeholder="Action (e.g. run.)" className={inputClass} value={action} onChange={(e) => setAction(e.target.value)} />
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
