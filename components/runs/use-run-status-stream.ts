"use client";

import { useQueryClient, type InfiniteData } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { feedState, openLiveFeed, type FeedState } from "@/components/ui/live-feed";
import type { RunStatus } from "@/server/db/generated/enums";
import type { RunListPage } from "./types";

// Live status for the runs list over /api/runs/stream (the same LISTEN
// connection as the run streams): a changed status is patched into the list in
// place; a run the list has not seen, or a reconnect, refetches it (at most
// once a second).

type Change = { id: string; status: RunStatus };

export function useRunStatusStream(): FeedState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<FeedState>("connecting");
  useEffect(() => {
    let refetchTimer: ReturnType<typeof setTimeout> | null = null;
    let opened = false;
    const refetch = (list: boolean) => {
      if (refetchTimer) return;
      refetchTimer = setTimeout(() => {
        refetchTimer = null;
        void queryClient.invalidateQueries({ queryKey: trpc.runs.counts.queryKey() });
        // The suggestions strip is a plain (not infinite) list query.
        void queryClient.invalidateQueries({ queryKey: trpc.runs.list.queryKey() });
        if (list) void queryClient.invalidateQueries({ queryKey: trpc.runs.list.infiniteQueryKey() });
      }, 1_000);
    };
    const onRun = (m: MessageEvent<string>) => {
      let change: Change;
      try {
        change = JSON.parse(m.data) as Change;
      } catch {
        return;
      }
      let found = false;
      queryClient.setQueriesData<InfiniteData<RunListPage>>({ queryKey: trpc.runs.list.infiniteQueryKey() }, (data) => {
        if (!data) return data;
        return {
          ...data,
          pages: data.pages.map((page) => ({
            ...page,
            items: page.items.map((item) => {
              if (item.id !== change.id) return item;
              found = true;
              return item.status === change.status ? item : { ...item, status: change.status };
            }),
          })),
        };
      });
      refetch(!found);
    };
    const stop = openLiveFeed({
      url: "/api/runs/stream",
      on: { run: onRun, resync: () => refetch(true) },
      // Changes made while disconnected were not heard: catch up.
      onOpen: () => {
        if (opened) refetch(true);
        opened = true;
      },
      onState: (s) => setState(feedState(s)),
    });
    return () => {
      stop();
      if (refetchTimer) clearTimeout(refetchTimer);
    };
  }, [queryClient, trpc]);
  return state;
}
