import type { Metadata } from "next";
import { NotificationsInbox } from "@/components/notifications/notifications-inbox";
import { INBOX_PAGE_SIZE } from "@/server/domain/notifications/schemas";
import { HydrateClient, getQueryClient, trpc } from "@/server/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

export default async function NotificationsPage() {
  const qc = getQueryClient();
  await Promise.all([
    qc.prefetchInfiniteQuery(
      trpc.notifications.list.infiniteQueryOptions({ unreadOnly: false, limit: INBOX_PAGE_SIZE }, { getNextPageParam: (last) => last.nextCursor }),
    ),
    qc.prefetchQuery(trpc.notifications.unreadCount.queryOptions()),
  ]);
  return (
    <HydrateClient>
      <NotificationsInbox />
    </HydrateClient>
  );
}
