"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { feedState, openLiveFeed, type FeedState } from "@/components/ui/live-feed";

// Live updates for /approvals over /api/approvals/stream (the run streams' LISTEN connection):
// a new or changed request refetches the queue and its counts (at most every 300 ms); a
// reconnect refetches too, since changes made while disconnected were not heard.

export function useApprovalStream(): FeedState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<FeedState>("connecting");
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let opened = false;
    const refetch = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void queryClient.invalidateQueries({ queryKey: trpc.approvals.list.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.approvals.counts.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.approvals.byId.queryKey() });
      }, 300);
    };
    const stop = openLiveFeed({
      url: "/api/approvals/stream",
      on: { approval: refetch, resync: refetch },
      onOpen: () => {
        if (opened) refetch();
        opened = true;
      },
      onState: (s) => setState(feedState(s)),
    });
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [queryClient, trpc]);
  return state;
}
