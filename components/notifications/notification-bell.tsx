"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useTRPC } from "@/components/providers/trpc";
import { cn } from "@/components/ui/cn";

/** The bell counts up to this (the server stops counting at 100). */
const shown = (n: number) => (n > 99 ? "99+" : String(n));

/** The header's link to /notifications with the signed-in user's unread count. */
export function NotificationBell() {
  const trpc = useTRPC();
  const pathname = usePathname();
  // Polled (and refetched on focus) so a new escalation shows without a reload.
  const unread = useQuery({ ...trpc.notifications.unreadCount.queryOptions(), refetchInterval: 30_000 });
  const count = unread.data ?? 0;
  const active = pathname === "/notifications";
  return (
    <Link
      href="/notifications"
      aria-label={count > 0 ? `Notifications, ${shown(count)} unread` : "Notifications"}
      aria-current={active ? "page" : undefined}
      data-testid="notification-bell"
      className={cn(
        "relative inline-flex size-8 items-center justify-center rounded-md text-zinc-600 hover:bg-zinc-100 hover:text-zinc-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-100",
        active && "bg-zinc-100 text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100",
      )}
    >
      <svg aria-hidden="true" viewBox="0 0 20 20" fill="currentColor" className="size-5">
        <path d="M10 2a6 6 0 0 0-6 6v2.59l-1.7 1.7A1 1 0 0 0 3 14h14a1 1 0 0 0 .7-1.7L16 10.58V8a6 6 0 0 0-6-6Zm0 16a2.5 2.5 0 0 1-2.45-2h4.9A2.5 2.5 0 0 1 10 18Z" />
      </svg>
      {count > 0 && (
        <span
          data-testid="notification-count"
          className="absolute -top-1 -right-1 min-w-4 rounded-full bg-red-600 px-1 text-center text-[10px] leading-4 font-semibold text-white"
        >
          {shown(count)}
        </span>
      )}
    </Link>
  );
}
