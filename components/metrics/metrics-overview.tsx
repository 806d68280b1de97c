"use client";

import { useQuery } from "@tanstack/react-query";
import { useQueryStates } from "nuqs";
import { MetricsSkeleton } from "@/components/layout/page-skeletons";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Card, cardVariants } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { formatDuration, formatUsd } from "@/components/ui/format";
import { runStatusLabel } from "@/components/runs/status-badge";
import type { RunStatus } from "@/server/db/generated/enums";
import { MetricsCharts } from "./metrics-charts";
import { metricsRangeParsers, metricsRanges, type MetricsRange } from "./range";

const rangeLabels: Record<MetricsRange, string> = { "24h": "24 hours", "7d": "7 days", "30d": "30 days" };

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
  const [{ range }, setRange] = useQueryStates(metricsRangeParsers, { history: "replace" });
  const windowHours = metricsRanges[range];
  const window = rangeLabels[range];
  const { data: m, isPending, error } = useQuery(trpc.metrics.overview.queryOptions({ windowHours }));
  const series = useQuery(trpc.metrics.series.queryOptions({ windowHours }));
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Metrics</h1>
          <p className="text-sm text-zinc-500">
            Dispatches across your repositories, from the records. Prometheus scrapes live counters and histograms from each
            process instead (<code>/api/metrics</code>, README &ldquo;Observability&rdquo;).
          </p>
        </div>
        <select
          aria-label="Time window"
          className="h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm dark:border-zinc-700 dark:bg-zinc-900"
          value={range}
          onChange={(e) => void setRange({ range: e.target.value as MetricsRange })}
        >
          {(Object.keys(metricsRanges) as MetricsRange[]).map((r) => (
            <option key={r} value={r}>
              Last {rangeLabels[r]}
            </option>
          ))}
        </select>
      </div>
      {error && <Alert>{error.message}</Alert>}
      {isPending && <MetricsSkeleton />}
      {m && (
        <>
          <dl className="grid grid-cols-2 gap-3 md:grid-cols-4">
            <Stat label="Queued now" value={String(m.runsByStatus.queued)} hint="runs waiting for an attempt" />
            <Stat label="Queue wait p50 / p95" value={`${secs(m.dispatchWaitSeconds.p50)} / ${secs(m.dispatchWaitSeconds.p95)}`} hint={`${m.dispatchWaitSeconds.count} attempts queued in the last ${window}`} />
            <Stat label="Run duration p50 / p95" value={`${secs(m.runDurationSeconds.p50)} / ${secs(m.runDurationSeconds.p95)}`} hint={`${m.runDurationSeconds.count} finished runs created in the last ${window}`} />
            <Stat label="Approval wait p50 / p95" value={`${secs(m.approvalWaitSeconds.p50)} / ${secs(m.approvalWaitSeconds.p95)}`} hint={`decided in the last ${window}; ${m.approvalsPending} pending now`} />
            <Stat label="Cost, all time" value={formatUsd(m.costUsd)} hint={`${(m.tokens.input + m.tokens.output).toLocaleString("en")} tokens, all runs (estimated)`} />
            <Stat label="Subagents started, all time" value={String(m.subagentsStarted)} />
            <Stat label="Write-backs succeeded, all time" value={String(m.writeBacks.succeeded)} hint={`${m.writeBacks.failed} failed, ${m.writeBacks.pending} pending`} />
            <Stat label="Triggers dropped, all time" value={String(m.dedupeDrops)} hint="duplicates, refusals, superseded and held by triage" />
          </dl>
          {series.data && <MetricsCharts bucket={series.data.bucket} points={series.data.points} />}
          {series.error && <Alert>{series.error.message}</Alert>}
          <section aria-labelledby="by-status">
            <h2 id="by-status" className="mb-2 text-sm font-semibold">Runs by status, now</h2>
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
