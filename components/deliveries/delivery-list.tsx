"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ActionButton } from "@/components/ui/action-button";
import { Badge, type BadgeProps } from "@/components/ui/badge";
import { FilterInput, FilterSelect } from "@/components/ui/filter-controls";
import { LoadMore } from "@/components/ui/load-more";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";
import { deliveryFilterParsers, deliveryListInput, deliveryOutcomes } from "./filters";

// Recent deliveries: what GitHub (and the local forge) sent, what Airlock made of it, and what it
// caused. "Re-evaluate" (admins) queues a delivery's evaluation again, e.g. after registering
// its repository; a trigger that already has its run is recorded as a duplicate, not run twice.

const tone: Record<string, BadgeProps["tone"]> = { processed: "success", duplicate: "info", ignored: "muted", rejected: "danger", failed: "danger", received: "progress" };
const label: Record<string, string> = { processed: "accepted", received: "waiting" };
const columns = ["Received", "Event", "Repository", "Outcome", "Caused", { label: "Took", className: "hidden lg:table-cell" }, ""];

export function DeliveryList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [values, setFilters] = useQueryStates(deliveryFilterParsers, { history: "replace" });
  const q = useInfiniteQuery(trpc.deliveries.list.infiniteQueryOptions(deliveryListInput(values), { getNextPageParam: (last) => last.nextCursor }));
  const items = q.data?.pages.flatMap((p) => p.items) ?? [];
  const isAdmin = q.data?.pages[0]?.canReevaluate ?? false;
  const reevaluate = useMutation(
    trpc.deliveries.reevaluate.mutationOptions({
      onSuccess: async () => {
        toast.success("Queued for evaluation again");
        await qc.invalidateQueries({ queryKey: trpc.deliveries.list.pathKey() });
      },
      onError: (err) => toast.error(`Not re-evaluated: ${err.message}`),
    }),
  );
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Deliveries</h1>
          <p className="text-sm text-zinc-500">Every webhook and local-CI delivery: what it was, what Airlock decided and why, and the runs and drops it caused.</p>
        </div>
        <div className="flex flex-wrap gap-2">
          <FilterSelect label="Filter by outcome" allLabel="All outcomes" value={values.outcome} onChange={(outcome) => void setFilters({ outcome })} options={deliveryOutcomes.map((o) => ({ value: o, label: label[o] ?? o }))} />
          <FilterInput aria-label="Filter by event" placeholder="Event (workflow_job)" value={values.event} onCommit={(event) => void setFilters({ event })} />
          <FilterInput aria-label="Filter by repository" placeholder="Repository" value={values.repository} onCommit={(repository) => void setFilters({ repository })} />
        </div>
      </div>
      {q.error && <p className="text-sm text-red-700">{q.error.message}</p>}
      <Table columns={columns} bodyTestId="deliveries-table" empty={items.length === 0 && !q.isPending ? "No deliveries match." : null}>
        {items.map((d) => (
          <tr key={d.id} id={`delivery-${d.deliveryId}`} data-delivery-id={d.deliveryId}>
            <td className="text-zinc-600 dark:text-zinc-400">
              <RelativeTime date={d.receivedAt} />
              <div className="font-mono text-[11px] text-zinc-400">{d.deliveryId.slice(0, 36)}</div>
            </td>
            <td className="font-mono text-xs">
              {d.event}
              {d.action ? `.${d.action}` : ""}
              <div className="text-[11px] text-zinc-400">{d.source}</div>
            </td>
            <td className="text-xs">
              {d.repository.name ?? "—"}
              {d.repository.name && !d.repository.registeredId && <div className="text-amber-700 dark:text-amber-400">not registered</div>}
              {d.repository.disabled && <div className="text-amber-700 dark:text-amber-400">disabled</div>}
            </td>
            <td className="max-w-sm text-xs">
              <Badge tone={tone[d.outcome] ?? "neutral"}>{label[d.outcome] ?? d.outcome}</Badge>
              {d.detail && <div className="mt-1 break-words text-zinc-600 dark:text-zinc-400">{d.detail}</div>}
              {d.reevaluations > 0 && <div className="text-[11px] text-zinc-400">re-evaluated {d.reevaluations}×</div>}
            </td>
            <td className="text-xs">
              {d.runs.map((r) => (
                <Link key={r.id} href={`/runs/${r.id}`} className="mr-2 text-indigo-600 hover:underline dark:text-indigo-400">
                  run #{r.number}
                </Link>
              ))}
              {d.drops.length > 0 && (
                <div className="text-zinc-500" title={d.drops.map((x) => x.reason).join("\n")}>
                  {d.drops.length} drop{d.drops.length === 1 ? "" : "s"}: {d.drops[0]?.reason}
                </div>
              )}
              {d.runs.length === 0 && d.drops.length === 0 && <span className="text-zinc-400">nothing</span>}
            </td>
            <td className="hidden text-xs text-zinc-500 lg:table-cell">{d.tookMs === null ? "waiting" : `${d.tookMs} ms`}</td>
            <td>
              <ActionButton
                size="sm"
                variant="secondary"
                disabledReason={!isAdmin ? "Only an Airlock admin can re-evaluate a delivery." : !d.canReevaluate ? (d.outcome === "received" ? "Waiting to be evaluated." : "The payload failed validation.") : reevaluate.isPending ? "Re-evaluating…" : null}
                onClick={() => reevaluate.mutate({ deliveryId: d.deliveryId })}
              >
                Re-evaluate
              </ActionButton>
            </td>
          </tr>
        ))}
      </Table>
      <LoadMore query={q} />
    </div>
  );
}
