import type { Metadata } from "next";
import { DeliveryList } from "@/components/deliveries/delivery-list";
import { deliveryListInput, loadDeliveryFilters } from "@/components/deliveries/filters";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Deliveries" };

export default async function DeliveriesPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const filters = await loadDeliveryFilters(searchParams);
  await getQueryClient().prefetchInfiniteQuery(trpc.deliveries.list.infiniteQueryOptions(deliveryListInput(filters), { getNextPageParam: (last) => last.nextCursor }));
  return (
    <HydrateClient>
      <DeliveryList />
    </HydrateClient>
  );
}
