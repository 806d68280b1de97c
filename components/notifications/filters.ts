import { createLoader, parseAsBoolean } from "nuqs/server";
import { INBOX_PAGE_SIZE } from "@/server/domain/notifications/schemas";

// The inbox's filter in the URL (shared by the page's prefetch and the inbox).

export const notificationFilterParsers = { unread: parseAsBoolean.withDefault(false) };

export const loadNotificationFilters = createLoader(notificationFilterParsers);

/** notifications.list's input for this filter. */
export const inboxInput = (f: { unread: boolean }) => ({ unreadOnly: f.unread, limit: INBOX_PAGE_SIZE });
