"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { LoadingRegion, Skeleton } from "@/components/ui/skeleton";
import { useHydrated } from "@/components/ui/use-hydrated";
import { EventRowView } from "./event-row";
import { KeyboardHelp } from "./keyboard-help";
import { buildRows, type Row } from "./model";
import { stepMatch } from "./search";
import type { WireEvent } from "./store";
import { TranscriptToolbar, type SearchState } from "./transcript-toolbar";
import { useRunTranscript } from "./use-run-transcript";
import { useTranscriptKeys } from "./use-transcript-keys";

// The centre pane: a virtualised transcript (only rows near the viewport are in
// the DOM), opened at the newest events, paging older ones in as gap rows
// scroll into view. It follows new events while at the bottom and stops when
// the reader scrolls up; search, deep links and keys jump anywhere, loading
// the window around the target first.

const estimate = (row: Row | undefined) => {
  if (!row || row.kind === "gap") return 44;
  switch (row.event.type) {
    case "message":
      return 96;
    case "log":
      return 32;
    default:
      return 36;
  }
};

/** Rows the server renders (the newest), so the transcript shows before any script runs. */
const serverRows = 20;

const emptySearch: SearchState = { query: "", ranFor: null, matches: [], current: null, truncated: false, pending: false, error: null };

export function Transcript(props: { runId: string; initial: WireEvent[]; lastEventSeq: number; terminal: boolean; onRunChanged: () => void }) {
  const { runId } = props;
  const t = useRunTranscript(props);
  const { store } = t;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(() => new Set());
  const [selected, setSelected] = useState<number | null>(null);
  const [search, setSearch] = useState<SearchState>(emptySearch);
  const [help, setHelp] = useState(false);
  const [atEnd, setAtEnd] = useState(true);
  const [pausedAt, setPausedAt] = useState<number | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const pendingJump = useRef<number | null>(null);
  const hydrated = useHydrated();
  // Gap rows load only once the view sits where it opened (not at offset 0 on the first frame).
  const [ready, setReady] = useState(false);

  // eslint-disable-next-line react-hooks/exhaustive-deps -- the store is mutable; `version` is its change signal
  const built = useMemo(() => buildRows(store.segmentList, { collapsed, startReached: store.startReached, knownLastSeq: store.knownLastSeq }), [t.version, collapsed, store]);
  const { rows } = built;

  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual is the virtualiser; the compiler skips memoising this component
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => estimate(rows[i]),
    getItemKey: (i) => rows[i]?.key ?? i,
    overscan: 10,
    // Chat-style: keep the reader's place when older rows are prepended, follow appends at the bottom.
    anchorTo: "end",
    followOnAppend: true,
    scrollEndThreshold: 40,
    onChange: (v) => setAtEnd(v.isAtEnd()),
  });

  useEffect(() => {
    if (atEnd) setPausedAt(null);
    else setPausedAt((p) => p ?? store.lastSeq);
  }, [atEnd, store]);

  // Scroll to a pending jump target once its row exists (expanding collapsed subagents on the way).
  const settleJump = useCallback(() => {
    const seq = pendingJump.current;
    if (seq === null || !hydrated) return;
    const index = built.indexOfSeq.get(seq);
    if (index !== undefined) {
      pendingJump.current = null;
      virtualizer.scrollToIndex(index, { align: "center" });
      return;
    }
    const hiddenBy = built.ancestorsOfSeq.get(seq)?.filter((a) => collapsed.has(a)) ?? [];
    if (hiddenBy.length > 0) setCollapsed((c) => new Set([...c].filter((a) => !hiddenBy.includes(a))));
  }, [built, collapsed, virtualizer, hydrated]);
  useLayoutEffect(settleJump, [settleJump]);

  const jumpTo = useCallback(
    async (seq: number) => {
      pendingJump.current = seq;
      setSelected(seq);
      if (!store.has(seq)) await t.loadAround(seq);
      settleJump();
    },
    [store, t, settleJump],
  );

  // Deep links: #event-<seq> on load and on every hash change (through a ref, so the listener sees the latest rows).
  const jumpRef = useRef(jumpTo);
  useEffect(() => {
    jumpRef.current = jumpTo;
  });
  useEffect(() => {
    const fromHash = () => {
      const m = /^#event-(\d+)$/.exec(window.location.hash);
      if (m) void jumpRef.current(Number(m[1]));
    };
    fromHash();
    window.addEventListener("hashchange", fromHash);
    return () => window.removeEventListener("hashchange", fromHash);
  }, []);

  useLayoutEffect(() => {
    if (!hydrated) return;
    if (!/^#event-\d+$/.test(window.location.hash)) virtualizer.scrollToEnd();
    const frame = requestAnimationFrame(() => setReady(true));
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- open at the newest events, once hydrated
  }, [hydrated]);

  // Gap rows in view load the window next to them: from below when the reader scrolls up into one.
  const items = virtualizer.getVirtualItems();
  const scrollOffset = virtualizer.scrollOffset ?? 0;
  const viewport = scrollRef.current?.clientHeight ?? 0;
  useEffect(() => {
    if (!ready) return;
    for (const item of items) {
      const row = rows[item.index];
      if (row?.kind !== "gap") continue;
      const fromBelow = item.start < scrollOffset + viewport / 2 || row.from === 1;
      void (fromBelow ? t.loadBefore(row.to + 1) : t.loadAfter(row.from - 1));
    }
  }, [ready, items, rows, scrollOffset, viewport, t]);

  const top = useCallback(() => void jumpTo(1), [jumpTo]);
  const latest = useCallback(() => {
    const last = rows.findLast((r) => r.kind === "event");
    if (last?.kind === "event") setSelected(last.event.seq);
    virtualizer.scrollToEnd();
  }, [rows, virtualizer]);

  const runSearch = useCallback(
    async (direction: 1 | -1) => {
      const query = search.query.trim();
      if (!query) return;
      let matches = search.matches;
      let truncated = search.truncated;
      if (search.ranFor !== query) {
        setSearch((s) => ({ ...s, pending: true, error: null }));
        try {
          const res = await queryClient.fetchQuery({ ...trpc.runs.searchEvents.queryOptions({ runId, query }), staleTime: 0 });
          matches = res.seqs;
          truncated = res.truncated;
        } catch {
          setSearch((s) => ({ ...s, pending: false, error: "Search failed" }));
          return;
        }
      }
      const from = search.ranFor === query ? search.current : selected;
      const next = search.ranFor === query ? stepMatch(matches, from, direction) : (matches.find((m) => m >= (selected ?? 0)) ?? matches[0] ?? null);
      setSearch((s) => ({ ...s, ranFor: query, matches, truncated, current: next, pending: false, error: null }));
      if (next !== null) await jumpTo(next);
    },
    [search, selected, queryClient, trpc, runId, jumpTo],
  );

  const moveSelection = useCallback(
    (direction: 1 | -1) => {
      const eventIndexes = rows.flatMap((r, i) => (r.kind === "event" ? [i] : []));
      if (eventIndexes.length === 0) return;
      const current = selected !== null ? built.indexOfSeq.get(selected) : undefined;
      let target: number | undefined;
      if (current === undefined) {
        const visible = virtualizer.getVirtualItems().filter((v) => rows[v.index]?.kind === "event" && v.end > scrollOffset && v.start < scrollOffset + viewport);
        target = direction === 1 ? visible[0]?.index : visible.at(-1)?.index;
      } else target = direction === 1 ? eventIndexes.find((i) => i > current) : eventIndexes.findLast((i) => i < current);
      const row = target !== undefined ? rows[target] : undefined;
      if (row?.kind !== "event" || target === undefined) return;
      setSelected(row.event.seq);
      virtualizer.scrollToIndex(target, { align: "auto" });
    },
    [rows, selected, built, virtualizer, scrollOffset, viewport],
  );

  useTranscriptKeys({
    next: () => moveSelection(1),
    previous: () => moveSelection(-1),
    focusSearch: () => searchRef.current?.focus(),
    top,
    bottom: latest,
    help: () => setHelp(true),
    nextMatch: () => void runSearch(1),
    previousMatch: () => void runSearch(-1),
  });

  const onToggle = useCallback((seq: number) => setExpanded((e) => toggled(e, seq)), []);
  const onToggleSubagent = useCallback((id: string) => setCollapsed((c) => toggled(c, id)), []);
  const matchSet = useMemo(() => new Set(search.ranFor === search.query.trim() ? search.matches : []), [search]);
  const newSincePause = pausedAt !== null && store.lastSeq !== null ? store.lastSeq - pausedAt : 0;

  return (
    <section aria-label="Transcript and live events" className="flex h-full min-h-0 flex-col">
      <TranscriptToolbar
        ref={searchRef}
        runId={runId}
        connection={t.connection}
        loaded={store.size}
        total={Math.max(store.knownLastSeq, store.size)}
        search={search}
        onQueryChange={(query) => setSearch((s) => ({ ...s, query }))}
        onSearch={(d) => void runSearch(d)}
        onClearSearch={() => setSearch(emptySearch)}
        onTop={top}
        onLatest={latest}
        onHelp={() => setHelp(true)}
      />
      <div className="relative min-h-0 flex-1">
        <div ref={scrollRef} data-testid="transcript" data-hydrated={hydrated ? "" : undefined} tabIndex={0} aria-label="Transcript events" className="h-full overflow-y-auto overscroll-contain focus-visible:outline-2 focus-visible:outline-indigo-500">
          {rows.length === 0 && <p className="p-4 text-sm text-zinc-600 dark:text-zinc-400">No events yet.</p>}
          {!hydrated && (
            <div className="flex min-h-full flex-col justify-end">
              {rows.slice(-serverRows).map((row) =>
                row.kind === "gap" ? (
                  <GapRowView key={row.key} from={row.from} to={row.to} />
                ) : (
                  <EventRowView key={row.key} row={row} runId={runId} expanded={false} collapsed={false} selected={false} match="none" onToggle={onToggle} onToggleSubagent={onToggleSubagent} />
                ),
              )}
            </div>
          )}
          <div hidden={!hydrated} style={{ height: virtualizer.getTotalSize(), position: "relative", width: "100%" }}>
            <div style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${items[0]?.start ?? 0}px)` }}>
              {items.map((item) => {
                const row = rows[item.index];
                if (!row) return null;
                return (
                  <div key={item.key} data-index={item.index} ref={virtualizer.measureElement}>
                    {row.kind === "gap" ? (
                      <GapRowView from={row.from} to={row.to} />
                    ) : (
                      <EventRowView
                        row={row}
                        runId={runId}
                        expanded={expanded.has(row.event.seq)}
                        collapsed={row.event.type === "subagent_started" && collapsed.has(String((row.event.payload as { id?: unknown }).id))}
                        selected={selected !== null && (selected === row.event.seq || selected === row.result?.seq || selected === row.completion?.seq)}
                        match={matchKind(row, matchSet, search.current)}
                        query={matchSet.size > 0 ? search.ranFor ?? undefined : undefined}
                        onToggle={onToggle}
                        onToggleSubagent={onToggleSubagent}
                      />
                    )}
                  </div>
                );
              })}
            </div>
          </div>
        </div>
        {!atEnd && (
          <Button size="sm" variant="primary" className="absolute bottom-3 left-1/2 -translate-x-1/2 shadow-lg" onClick={latest}>
            Jump to latest{newSincePause > 0 ? ` (${newSincePause.toLocaleString("en")} new)` : ""}
          </Button>
        )}
      </div>
      <KeyboardHelp open={help} onClose={() => setHelp(false)} />
    </section>
  );
}

function GapRowView({ from, to }: { from: number; to: number }) {
  return (
    <LoadingRegion label={`Loading events ${from.toLocaleString("en")}–${to.toLocaleString("en")}`} className="flex items-center gap-3 border-b border-dashed border-zinc-200 px-3 py-3 dark:border-zinc-800">
      <Skeleton className="h-4 w-10" />
      <Skeleton className="h-4 flex-1" />
    </LoadingRegion>
  );
}

function matchKind(row: Row & { kind: "event" }, matches: ReadonlySet<number>, current: number | null): "none" | "match" | "current" {
  const seqs = [row.event.seq, row.result?.seq, row.completion?.seq];
  if (current !== null && seqs.includes(current)) return "current";
  return seqs.some((s) => s !== undefined && matches.has(s)) ? "match" : "none";
}

function toggled<T>(set: ReadonlySet<T>, value: T): ReadonlySet<T> {
  const next = new Set(set);
  if (next.has(value)) next.delete(value);
  else next.add(value);
  return next;
}
