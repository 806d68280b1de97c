"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useQueryStates } from "nuqs";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { LoadMore } from "@/components/ui/load-more";
import { RelativeTime } from "@/components/ui/time";
import { notificationKindLabel } from "@/server/domain/notifications/schemas";
import { inboxInput, notificationFilterParsers } from "./filters";

const kindTone = (kind: string) => (kind === "triage_rollback" || kind === "write_back_failed" ? "danger" : "warning") as "danger" | "warning";

/** /notifications: newest first, per-person read state, mark one or all read. Text is rendered as text. */
export function NotificationsInbox() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [{ unread: unreadOnly }, setFilters] = useQueryStates(notificationFilterParsers, { history: "push" });
  const q = useInfiniteQuery(trpc.notifications.list.infiniteQueryOptions(inboxInput({ unread: unreadOnly }), { getNextPageParam: (last) => last.nextCursor }));
  const items = q.data?.pages.flatMap((p) => p.items) ?? [];
  // Refresh the list and the bell together after any change of read state.
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.notifications.pathKey() });
  const onError = (err: { message: string }) => toast.error(`Could not mark read: ${err.message}`);
  const markRead = useMutation(trpc.notifications.markRead.mutationOptions({ onSettled: refresh, onError }));
  const markAll = useMutation(
    trpc.notifications.markAllRead.mutationOptions({
      onSettled: refresh,
      onError,
      onSuccess: (r) => toast.success(r.marked === 1 ? "1 notification marked read" : `${r.marked} notifications marked read`),
    }),
  );
  const newest = items[0]?.createdAt;
  const anyUnread = items.some((n) => !n.read);

  return (
    <div className="max-w-4xl space-y-4">
      <header className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Notifications</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Escalations, rollbacks and failed write-backs in your repositories.
          </p>
        </div>
        <div className="flex items-center gap-3">
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={unreadOnly} onChange={(e) => void setFilters({ unread: e.target.checked })} className="size-4" />
            Unread only
          </label>
          <Button
            size="sm"
            disabled={!anyUnread || markAll.isPending}
            // Up to the newest one shown: a notification arriving meanwhile stays unread.
            onClick={() => markAll.mutate({ upTo: newest })}
          >
            Mark all read
          </Button>
        </div>
      </header>

      <Card as="ul" padding="none" data-testid="notification-list" className="divide-y divide-zinc-200 dark:divide-zinc-800">
        {items.map((n) => {
          const titleId = `notification-${n.id}-title`;
          return (
            <li key={n.id} aria-labelledby={titleId} data-read={n.read} className={cn("flex gap-3 px-4 py-3", !n.read && "bg-indigo-50/60 dark:bg-indigo-950/30")}>
              <span aria-hidden="true" className={cn("mt-1.5 size-2 shrink-0 rounded-full", n.read ? "bg-transparent" : "bg-indigo-600")} />
              <div className="min-w-0 flex-1 space-y-1">
                <div className="flex flex-wrap items-center gap-2 text-xs text-zinc-600 dark:text-zinc-400">
                  <Badge tone={kindTone(n.kind)}>{notificationKindLabel[n.kind]}</Badge>
                  <span>{n.repository.fullName}</span>
                  <RelativeTime date={n.createdAt} />
                  {!n.read && <span className="sr-only">Unread.</span>}
                </div>
                <h2 id={titleId} className={cn("text-sm break-words", n.read ? "font-normal" : "font-semibold")}>
                  <Link
                    href={n.href}
                    className="hover:underline focus-visible:outline-2 focus-visible:outline-indigo-500"
                    onClick={() => {
                      if (!n.read) markRead.mutate({ ids: [n.id] });
                    }}
                  >
                    {n.title}
                  </Link>
                </h2>
                {n.body && <p className="line-clamp-4 text-sm break-words whitespace-pre-line text-zinc-700 dark:text-zinc-300">{n.body}</p>}
                {n.runId && n.href !== `/runs/${n.runId}` && (
                  <Link href={`/runs/${n.runId}`} className="text-xs text-indigo-700 hover:underline dark:text-indigo-400">
                    Open the run
                  </Link>
                )}
              </div>
              {!n.read && (
                <Button
                  size="sm"
                  variant="ghost"
                  className="shrink-0 self-start"
                  aria-label={`Mark read: ${n.title}`}
                  disabled={markRead.isPending && markRead.variables?.ids.includes(n.id)}
                  onClick={() => markRead.mutate({ ids: [n.id] })}
                >
                  Mark read
                </Button>
              )}
            </li>
          );
        })}
        {items.length === 0 && !q.isPending && (
          <li>
            <EmptyState>{unreadOnly ? "No unread notifications." : "No notifications yet."}</EmptyState>
          </li>
        )}
      </Card>
      <LoadMore query={q} />
    </div>
  );
}
