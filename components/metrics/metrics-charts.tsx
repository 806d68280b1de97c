"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { Card } from "@/components/ui/card";
import { formatUsd } from "@/components/ui/format";
import type { MetricsPoint } from "@/server/domain/metrics";

// The /metrics figures over time (metrics.series): one point per hour or day of the range.

const tick = (bucket: "hour" | "day") => (iso: string) => {
  const d = new Date(iso);
  return bucket === "hour" ? d.toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit" }) : d.toLocaleDateString("en", { month: "short", day: "numeric" });
};

function ChartCard({ title, note, children }: { title: string; note: string; children: React.ReactElement }) {
  return (
    <Card>
      <h3 className="text-sm font-semibold">{title}</h3>
      <p className="mb-2 text-xs text-zinc-500">{note}</p>
      <div className="h-48">
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </Card>
  );
}

export function MetricsCharts({ bucket, points }: { bucket: "hour" | "day"; points: MetricsPoint[] }) {
  const fmt = tick(bucket);
  const per = bucket === "hour" ? "per hour" : "per day";
  const axis = { fontSize: 11 };
  return (
    <section aria-labelledby="over-time" className="space-y-2">
      <h2 id="over-time" className="text-sm font-semibold">Over time ({per})</h2>
      <div className="grid gap-3 md:grid-cols-2">
        <ChartCard title="Runs created" note={`Runs by creation time, ${per}; failed = those that ended failed.`}>
          <BarChart data={points}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="at" tickFormatter={fmt} tick={axis} minTickGap={24} />
            <YAxis allowDecimals={false} tick={axis} width={32} />
            <Tooltip labelFormatter={(v) => fmt(String(v))} />
            <Legend />
            <Bar dataKey="runsCreated" name="created" fill="#6366f1" />
            <Bar dataKey="runsFailed" name="failed" fill="#ef4444" />
          </BarChart>
        </ChartCard>
        <ChartCard title="Write-backs" note={`Write-backs by creation time and outcome, ${per}.`}>
          <BarChart data={points}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="at" tickFormatter={fmt} tick={axis} minTickGap={24} />
            <YAxis allowDecimals={false} tick={axis} width={32} />
            <Tooltip labelFormatter={(v) => fmt(String(v))} />
            <Legend />
            <Bar dataKey="writeBacksSucceeded" name="succeeded" stackId="wb" fill="#22c55e" />
            <Bar dataKey="writeBacksFailed" name="failed" stackId="wb" fill="#ef4444" />
          </BarChart>
        </ChartCard>
        <ChartCard title="Queue wait p50 (seconds)" note={`Median wait from queued to started of attempts queued in each ${bucket}; gaps: none started.`}>
          <LineChart data={points}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="at" tickFormatter={fmt} tick={axis} minTickGap={24} />
            <YAxis tick={axis} width={40} />
            <Tooltip labelFormatter={(v) => fmt(String(v))} />
            <Line dataKey="queueWaitP50" name="p50 wait (s)" stroke="#0ea5e9" dot={false} connectNulls={false} />
          </LineChart>
        </ChartCard>
        <ChartCard title="Estimated model cost" note={`Cost of the runs created in each ${bucket} (USD, estimated by the adapters).`}>
          <LineChart data={points}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="at" tickFormatter={fmt} tick={axis} minTickGap={24} />
            <YAxis tick={axis} width={48} tickFormatter={(v: number) => formatUsd(v)} />
            <Tooltip labelFormatter={(v) => fmt(String(v))} formatter={(v) => formatUsd(Number(v))} />
            <Line dataKey="costUsd" name="cost" stroke="#f59e0b" dot={false} />
          </LineChart>
        </ChartCard>
      </div>
    </section>
  );
}
