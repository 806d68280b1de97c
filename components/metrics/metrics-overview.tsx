"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { MetricsSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Card, cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { formatDuration, formatUsd } from "@/components/ui/format";
import { runStatusLabel } from "@/components/runs/status-badge";
import type { RunStatus } from "@/server/db/generated/enums";

const windows = [
  { hours: 24, label: "24 hours" },
  { hours: 24 * 7, label: "7 days" },
  { hours: 24 * 30, label: "30 days" },
];

function Stat({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <Card>
      <dt className="text-xs font-medium tracking-wide text-zinc-500 uppercase">{label}</dt>
      <dd className="mt-1 text-2xl font-semibold tabular-nums">{value}</dd>
      {hint && <dd className="mt-0.5 text-xs text-zinc-500">{hint}</dd>}
    </Card>
  );
}

const secs = (s: number | null) => (s == null ? "—" : formatDuration(Math.round(s * 1000)));

export function MetricsOverview() {
  const trpc = useTRPC();
  const [windowHours, setWindowHours] = useState(24 * 7);
  const { data: m, isPending, error } = useQuery(trpc.metrics.overview.queryOptions({ windowHours }));
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Metrics</h1>
          <p className="text-sm text-zinc-500">
            Dispatches across your repositories. Prometheus scrapes the same figures at <code>/api/metrics</code>.
          </p>
        </div>
        <select
          aria-label="Time window"
          className="h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900"
          value={windowHours}
          onChange={(e) => setWindowHours(Number(e.target.value))}
        >
          {windows.map((w) => (
            <option key={w.hours} value={w.hours}>
              Last {w.label}
            </option>
          ))}
        </select>
      </div>
      {error && <Alert>{error.message}</Alert>}
      {isPending && <MetricsSkeleton />}
      {m && (
        <>
          <dl className="grid grid-cols-2 gap-3 md:grid-cols-4">
            <Stat label="Queued" value={String(m.runsByStatus.queued)} hint="waiting for an attempt" />
            <Stat label="Queue wait p50 / p95" value={`${secs(m.dispatchWaitSeconds.p50)} / ${secs(m.dispatchWaitSeconds.p95)}`} hint={`${m.dispatchWaitSeconds.count} attempts`} />
            <Stat label="Run duration p50 / p95" value={`${secs(m.runDurationSeconds.p50)} / ${secs(m.runDurationSeconds.p95)}`} hint={`${m.runDurationSeconds.count} runs`} />
            <Stat label="Approval wait p50 / p95" value={`${secs(m.approvalWaitSeconds.p50)} / ${secs(m.approvalWaitSeconds.p95)}`} hint={`${m.approvalsPending} pending now`} />
            <Stat label="Cost" value={formatUsd(m.costUsd)} hint={`${(m.tokens.input + m.tokens.output).toLocaleString("en")} tokens`} />
            <Stat label="Subagents started" value={String(m.subagentsStarted)} />
            <Stat label="Write-backs" value={String(m.writeBacks.succeeded)} hint={`${m.writeBacks.failed} failed, ${m.writeBacks.pending} pending`} />
            <Stat label="Dedupe drops" value={String(m.dedupeDrops)} hint="duplicate or refused triggers" />
          </dl>
          <section aria-labelledby="by-status">
            <h2 id="by-status" className="mb-2 text-sm font-semibold">Runs by status</h2>
            <ul className="grid grid-cols-2 gap-2 sm:grid-cols-4">
              {(Object.entries(m.runsByStatus) as [RunStatus, number][]).map(([status, n]) => (
                <li key={status} className={cn(cardVariants({ padding: "none" }), "flex items-center justify-between rounded-md px-3 py-2 text-sm")}>
                  <span>{runStatusLabel[status]}</span>
                  <span className="font-semibold tabular-nums">{n}</span>
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </div>
  );
}
