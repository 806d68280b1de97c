"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { openLiveFeed } from "@/components/ui/live-feed";
import { runChangingTypes, transcriptEventTypes } from "./event-types";
import { fromWire, TranscriptStore, type TEvent, type WireEvent } from "./store";
import { transcriptPageSize } from "./window";

// The data side of the transcript: the newest window (prefetched by the
// page), older or jumped-to windows on demand, and live events over SSE,
// applied once per animation frame however fast they arrive.

export type Connection = "connecting" | "live" | "reconnecting" | "ended" | "offline";


export function useRunTranscript(opts: { runId: string; initial: WireEvent[]; lastEventSeq: number; terminal: boolean; onRunChanged: () => void }) {
  const { runId } = opts;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [store] = useState(() => {
    const s = new TranscriptStore();
    s.add(opts.initial.map(fromWire), { silent: true });
    if (opts.initial.length === 0 && opts.lastEventSeq === 0) s.startReached = true;
    s.knownLastSeq = Math.max(s.knownLastSeq, opts.lastEventSeq);
    return s;
  });
  const version = useSyncExternalStore(store.subscribe, store.getVersion, store.getVersion);
  const [connection, setConnection] = useState<Connection>("connecting");
  const onRunChanged = useRef(opts.onRunChanged);
  useEffect(() => {
    onRunChanged.current = opts.onRunChanged;
  });

  // One request per window at a time; a window that came back empty is not asked for again.
  // A failed window waits a few seconds before it is asked for again (scrolling re-requests it).
  const inFlight = useRef(new Set<string>());
  const exhausted = useRef(new Set<string>());
  const failedAt = useRef(new Map<string, number>());
  const fetchWindow = useCallback(
    async (key: string, input: { beforeSeq?: number; afterSeq?: number }) => {
      if (inFlight.current.has(key) || exhausted.current.has(key)) return;
      if (Date.now() - (failedAt.current.get(key) ?? 0) < 3_000) return;
      inFlight.current.add(key);
      try {
        // gcTime 0: pages live in the store, not twice in the query cache.
        const events = await queryClient.fetchQuery({ ...trpc.runs.events.queryOptions({ runId, limit: transcriptPageSize, ...input }), gcTime: 0, staleTime: 0 });
        if (events.length === 0) {
          exhausted.current.add(key);
          if (input.beforeSeq !== undefined) store.markStart();
          else store.markEnd();
        } else store.add(events.map(fromWire));
      } catch {
        failedAt.current.set(key, Date.now());
      } finally {
        inFlight.current.delete(key);
      }
    },
    [queryClient, trpc, runId, store],
  );

  const loadBefore = useCallback((seq: number) => fetchWindow(`b${seq}`, { beforeSeq: seq }), [fetchWindow]);
  const loadAfter = useCallback((seq: number) => fetchWindow(`a${seq}`, { afterSeq: seq }), [fetchWindow]);
  /** Loads a window that holds `seq` (for deep links, search and "top"). */
  const loadAround = useCallback((seq: number) => fetchWindow(`a${seq}`, { afterSeq: Math.max(0, seq - 100) }), [fetchWindow]);

  useEffect(() => {
    let pending: TEvent[] = [];
    let frame: number | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;

    const flush = () => {
      frame = null;
      timer = null;
      const batch = pending;
      pending = [];
      if (batch.length === 0) return;
      store.add(batch);
      if (batch.some((e) => runChangingTypes.has(e.type))) onRunChanged.current();
    };
    const schedule = () => {
      if (frame !== null || timer !== null) return;
      // Hidden tabs get no animation frames: fall back to a timer so the batch stays small.
      if (document.hidden) timer = setTimeout(flush, 250);
      else frame = requestAnimationFrame(flush);
    };
    const onEvent = (m: MessageEvent<string>) => {
      try {
        pending.push(fromWire(JSON.parse(m.data) as WireEvent));
      } catch {
        return;
      }
      schedule();
    };
    const on: Record<string, (m: MessageEvent<string>) => void> = Object.fromEntries(transcriptEventTypes.map((type) => [type, onEvent]));
    on.end = () => {
      stop();
      flush();
      setConnection("ended");
      onRunChanged.current();
    };
    const stop = openLiveFeed({
      // Resume after the newest event held; EventSource then sends Last-Event-ID itself on reconnects.
      url: () => {
        let after = store.lastSeq ?? 0;
        for (const e of pending) after = Math.max(after, e.seq);
        return `/api/runs/${encodeURIComponent(runId)}/events?lastEventId=${after}`;
      },
      on,
      // Refused (429/503): the feed retries with backoff; the transcript says it is offline meanwhile.
      onState: (s) => setConnection(s === "refused" ? "offline" : s),
    });
    return () => {
      stop();
      if (frame !== null) cancelAnimationFrame(frame);
      if (timer !== null) clearTimeout(timer);
    };
    // Reconnects when the run goes from terminal to live again (a retry): its stream had ended.
  }, [runId, store, opts.terminal]);

  return { store, version, connection, loadBefore, loadAfter, loadAround };
}
