"use client";

import { forwardRef } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import type { Connection } from "./use-run-transcript";

const connectionLabel: Record<Connection, { text: string; tone: "success" | "warning" | "muted" | "danger" | "neutral" }> = {
  connecting: { text: "Connecting…", tone: "neutral" },
  live: { text: "Live", tone: "success" },
  reconnecting: { text: "Reconnecting…", tone: "warning" },
  ended: { text: "Complete", tone: "muted" },
  offline: { text: "Offline, retrying", tone: "danger" },
};

export type SearchState = {
  query: string;
  /** The query `matches` belong to; null before the first search. */
  ranFor: string | null;
  matches: number[];
  current: number | null;
  truncated: boolean;
  pending: boolean;
  error: string | null;
};

function searchStatus(s: SearchState, position: number): string {
  if (s.pending) return "…";
  if (s.error) return s.error;
  if (s.ranFor === null || s.ranFor !== s.query.trim()) return "";
  if (s.matches.length === 0) return "No matches";
  return `${position} of ${s.matches.length}${s.truncated ? "+" : ""}`;
}

type ToolbarProps = {
  /** The run, for the export links. */
  runId: string;
  connection: Connection;
  loaded: number;
  total: number;
  search: SearchState;
  onQueryChange: (q: string) => void;
  onSearch: (direction: 1 | -1) => void;
  onClearSearch: () => void;
  onTop: () => void;
  onLatest: () => void;
  onHelp: () => void;
};

const exportLink = "rounded px-1.5 py-0.5 text-xs text-indigo-700 hover:underline dark:text-indigo-400";

/** The transcript as files (every event, not only the loaded window) and the raw JSON lines. */
function ExportLinks({ runId }: { runId: string }) {
  const href = (query: string) => `/api/runs/${encodeURIComponent(runId)}/transcript?${query}`;
  return (
    <span className="flex items-center" aria-label="Export the transcript">
      <a className={exportLink} href={href("format=jsonl")} target="_blank" rel="noopener">Raw</a>
      <a className={exportLink} href={href("format=jsonl&download=1")} download>JSONL</a>
      <a className={exportLink} href={href("format=md&download=1")} download>Markdown</a>
    </span>
  );
}

export const TranscriptToolbar = forwardRef<HTMLInputElement, ToolbarProps>(function TranscriptToolbar(p, searchRef) {
  const c = connectionLabel[p.connection];
  const position = p.search.current !== null ? p.search.matches.indexOf(p.search.current) + 1 : 0;
  return (
    <div className="flex flex-wrap items-center gap-x-2 gap-y-1 border-b border-zinc-200 px-3 py-1.5 dark:border-zinc-800">
      <h2 className="text-sm font-semibold">Transcript</h2>
      <Badge tone={c.tone} data-testid="stream-status">
        {p.connection === "live" && <span aria-hidden className="size-1.5 animate-pulse rounded-full bg-current" />}
        {c.text}
      </Badge>
      <span className="text-xs text-zinc-500 dark:text-zinc-400" aria-live="off">
        {p.loaded.toLocaleString("en")}/{p.total.toLocaleString("en")} events
      </span>
      <form
        role="search"
        className="ml-auto flex items-center gap-1"
        onSubmit={(e) => {
          e.preventDefault();
          p.onSearch(1);
        }}
      >
        <input
          ref={searchRef}
          type="search"
          aria-label="Search transcript"
          placeholder="Search  /"
          value={p.search.query}
          onChange={(e) => p.onQueryChange(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && e.shiftKey) {
              e.preventDefault();
              p.onSearch(-1);
            } else if (e.key === "Escape") {
              p.onClearSearch();
              e.currentTarget.blur();
            }
          }}
          className="h-7 w-32 rounded-md border border-zinc-300 bg-white px-2 text-xs dark:border-zinc-700 dark:bg-zinc-900"
        />
        <span className="min-w-12 text-center text-xs text-zinc-600 tabular-nums dark:text-zinc-400" role="status" aria-live="polite" data-testid="search-position">
          {searchStatus(p.search, position)}
        </span>
        <Button type="button" size="sm" variant="ghost" aria-label="Previous match" onClick={() => p.onSearch(-1)}>
          ↑
        </Button>
        <Button type="button" size="sm" variant="ghost" aria-label="Next match" onClick={() => p.onSearch(1)}>
          ↓
        </Button>
      </form>
      <span className="flex items-center">
        <Button type="button" size="sm" variant="ghost" className="px-1.5" onClick={p.onTop} aria-label="First event" title="First event (g g)">
          Top
        </Button>
        <Button type="button" size="sm" variant="ghost" className="px-1.5" onClick={p.onLatest} aria-label="Latest event" title="Latest event (G)">
          Latest
        </Button>
        <Button type="button" size="sm" variant="ghost" className="px-1.5" onClick={p.onHelp} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">
          ?
        </Button>
      </span>
      <ExportLinks runId={p.runId} />
    </div>
  );
});
