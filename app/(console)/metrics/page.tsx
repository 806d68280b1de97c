import type { Metadata } from "next";
import { MetricsOverview } from "@/components/metrics/metrics-overview";
import { loadMetricsRange, metricsRanges } from "@/components/metrics/range";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Metrics" };

export default async function MetricsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { range } = await loadMetricsRange(searchParams);
  const windowHours = metricsRanges[range];
  const queryClient = getQueryClient();
  await Promise.all([queryClient.prefetchQuery(trpc.metrics.overview.queryOptions({ windowHours })), queryClient.prefetchQuery(trpc.metrics.series.queryOptions({ windowHours }))]);
  return (
    <HydrateClient>
      <MetricsOverview />
    </HydrateClient>
  );
}
