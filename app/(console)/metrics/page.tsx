import type { Metadata } from "next";
import { MetricsOverview } from "@/components/metrics/metrics-overview";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Metrics" };

export default async function MetricsPage() {
  await getQueryClient().prefetchQuery(trpc.metrics.overview.queryOptions({ windowHours: 24 * 7 }));
  return (
    <HydrateClient>
      <MetricsOverview />
    </HydrateClient>
  );
}
