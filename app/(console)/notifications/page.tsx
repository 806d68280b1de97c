import type { Metadata } from "next";
import { NotificationsInbox } from "@/components/notifications/notifications-inbox";
import { inboxInput, loadNotificationFilters } from "@/components/notifications/filters";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

export default async function NotificationsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const filters = await loadNotificationFilters(searchParams);
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchInfiniteQuery(trpc.notifications.list.infiniteQueryOptions(inboxInput(filters), { getNextPageParam: (last) => last.nextCursor })),
    qc.prefetchQuery(trpc.notifications.unreadCount.queryOptions()),
  ]);
  return (
    <HydrateClient>
      <NotificationsInbox />
    </HydrateClient>
  );
}
