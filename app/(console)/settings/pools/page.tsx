import type { Metadata } from "next";
import { PoolSettings } from "@/components/settings/pool-settings";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Runner pools and grants" };

export default async function PoolsPage() {
  await getQueryClient().prefetchQuery(trpc.pools.settings.queryOptions());
  return (
    <HydrateClient>
      <PoolSettings />
    </HydrateClient>
  );
}
