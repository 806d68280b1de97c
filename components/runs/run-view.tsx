"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Transcript } from "@/components/transcript/transcript";
import { initialEventsInput } from "@/components/transcript/window";
import { RunPageSkeleton, TranscriptSkeleton } from "@/components/layout/page-skeletons";
import { Alert } from "@/components/ui/alert";
import { Card } from "@/components/ui/card";
import { LoadingRegion } from "@/components/ui/skeleton";
import { ContextPane } from "./context-pane";
import { DetailsPane } from "./details-pane";
import { DroppedTriggers } from "./dropped-triggers";
import { FixLoopSection } from "./fix-loop-section";
import { PolicyDecisions } from "./policy-decisions";
import { RunFooter } from "./run-footer";
import { RunHeader } from "./run-header";

// /runs/<id>: a CI check page plus the agent's transcript. Header on top,
// context | transcript | details below, controls at the bottom. The three
// panes scroll on their own on a laptop screen and stack on narrow ones.

export function RunView({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const run = useQuery(trpc.runs.byId.queryOptions({ runId }));
  // The transcript keeps its own store after this first window: never refetch it.
  const events = useQuery({ ...trpc.runs.events.queryOptions(initialEventsInput(runId)), staleTime: Number.POSITIVE_INFINITY, refetchOnWindowFocus: false });

  // Live events that change the run (status, cost, approvals…) refresh the read model, at most once a second.
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onRunChanged = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      last.current = Date.now();
      void queryClient.invalidateQueries({ queryKey: trpc.runs.byId.queryKey({ runId }) });
    }, Math.max(0, 1_000 - (Date.now() - last.current)));
  }, [queryClient, trpc, runId]);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  if (run.isPending) return <RunPageSkeleton />;
  if (run.error) return <Alert>{run.error.message}</Alert>;
  const r = run.data;
  return (
    <div className="flex flex-col gap-3 lg:h-[calc(100dvh-6rem)]">
      <RunHeader run={r} />
      <div className="grid min-h-0 flex-1 grid-cols-1 gap-3 lg:grid-cols-[280px_minmax(0,1fr)_300px] 2xl:grid-cols-[340px_minmax(0,1fr)_360px]">
        <aside aria-label="Context" tabIndex={0} className="min-h-0 space-y-3 focus-visible:outline-2 focus-visible:outline-indigo-500 lg:overflow-y-auto">
          <ContextPane run={r} />
        </aside>
        <Card padding="none" className="h-[70vh] min-h-0 overflow-hidden lg:h-auto">
          {events.data ? (
            <Transcript key={runId} runId={runId} initial={events.data} lastEventSeq={r.lastEventSeq} terminal={r.terminal} onRunChanged={onRunChanged} />
          ) : events.error ? (
            <Alert className="p-4">{events.error.message}</Alert>
          ) : (
            <LoadingRegion label="Loading the transcript">
              <TranscriptSkeleton />
            </LoadingRegion>
          )}
        </Card>
        <aside aria-label="Run details" tabIndex={0} className="min-h-0 space-y-3 focus-visible:outline-2 focus-visible:outline-indigo-500 lg:overflow-y-auto">
          <PolicyDecisions runId={runId} lastEventSeq={r.lastEventSeq} />
          <DetailsPane run={r} />
          <DroppedTriggers run={r} />
          <FixLoopSection runId={runId} />
        </aside>
      </div>
      <RunFooter run={r} />
    </div>
  );
}
