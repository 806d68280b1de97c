"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";

const inputClass =
  "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900";

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
      <div className="overflow-hidden rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
        <table className="w-full text-sm">
          <thead className="border-b border-zinc-200 bg-zinc-50 text-left text-xs text-zinc-500 uppercase dark:border-zinc-800 dark:bg-zinc-900/60">
            <tr>
              <th className="px-3 py-2 font-medium">When</th>
              <th className="px-3 py-2 font-medium">Actor</th>
              <th className="px-3 py-2 font-medium">Action</th>
              <th className="px-3 py-2 font-medium">Object</th>
              <th className="hidden px-3 py-2 font-medium lg:table-cell">Detail</th>
            </tr>
          </thead>
          <tbody data-testid="audit-table" className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {items.map((e) => {
              const href = objectHref(e.objectType, e.objectId);
              return (
                <tr key={e.id}>
                  <td className="px-3 py-2 whitespace-nowrap text-zinc-500" title={e.createdAt.toISOString()}>
                    {e.createdAt.toISOString().replace("T", " ").slice(0, 19)}
                  </td>
                  <td className="px-3 py-2">{e.actor}</td>
                  <td className="px-3 py-2 font-mono text-xs">{e.action}</td>
                  <td className="px-3 py-2 text-xs">
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
                  <td className="hidden max-w-md truncate px-3 py-2 font-mono text-xs text-zinc-500 lg:table-cell">
                    {e.detail ? JSON.stringify(e.detail) : ""}
                  </td>
                </tr>
              );
            })}
            {items.length === 0 && !q.isPending && (
              <tr>
                <td colSpan={5} className="px-3 py-10 text-center text-zinc-500">No audit entries match.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {q.hasNextPage && (
        <div className="flex justify-center">
          <Button onClick={() => q.fetchNextPage()} disabled={q.isFetchingNextPage}>
            {q.isFetchingNextPage ? "Loading…" : "Load more"}
          </Button>
        </div>
      )}
    </div>
  );
}
