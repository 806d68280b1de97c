import type { TEvent } from "./store";

// Events -> the rows the transcript shows. A tool result joins its call's row
// (paired by id, with the duration); a subagent's completion joins its start
// row; events inside a subagent nest under it (a tree, collapsible); missing
// seq ranges become gap rows that load when scrolled into view.

export type EventRow = {
  kind: "event";
  key: string;
  event: TEvent;
  depth: number;
  /** Subagent ids enclosing this event, outermost first. */
  ancestors: readonly string[];
  /** tool_call: its result, when loaded. */
  result?: TEvent;
  /** subagent_started: its completion, when loaded. */
  completion?: TEvent;
  /** subagent_started: events inside it (hidden while collapsed). */
  childCount?: number;
};

export type GapRow = { kind: "gap"; key: string; from: number; to: number };
export type Row = EventRow | GapRow;

export type Rows = {
  rows: Row[];
  /** Row index of every shown seq, including results and completions merged into another row. */
  indexOfSeq: Map<number, number>;
  /** Subagents enclosing every loaded seq (to expand them when jumping to a hidden event). */
  ancestorsOfSeq: Map<number, readonly string[]>;
};

const rec = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown) => (typeof v === "string" ? v : null);

export const payloadOf = rec;

/** How long a tool call took: the result's own measure, else the time between the two events. */
export function toolDuration(call: TEvent, result: TEvent | undefined): number | null {
  if (!result) return null;
  const d = rec(result.payload).durationMs;
  if (typeof d === "number" && Number.isFinite(d) && d >= 0) return d;
  return result.at >= call.at ? result.at - call.at : null;
}

const maxDepth = 16;

export function buildRows(
  segments: readonly (readonly TEvent[])[],
  opts: { collapsed?: ReadonlySet<string>; startReached: boolean; knownLastSeq: number },
): Rows {
  const collapsed = opts.collapsed ?? new Set<string>();
  // Pass 1: pairings and the subagent tree.
  const callSeqById = new Map<string, number>();
  const resultOfCall = new Map<number, TEvent>();
  const merged = new Set<number>();
  const subagents = new Map<string, { parentId: string | null; startSeq: number; completion?: TEvent }>();
  for (const seg of segments) {
    for (const e of seg) {
      const p = rec(e.payload);
      if (e.type === "tool_call") {
        const id = str(p.id);
        if (id && !callSeqById.has(id)) callSeqById.set(id, e.seq);
      } else if (e.type === "tool_result") {
        const callSeq = callSeqById.get(str(p.toolCallId) ?? "");
        if (callSeq !== undefined && !resultOfCall.has(callSeq)) {
          resultOfCall.set(callSeq, e);
          merged.add(e.seq);
        }
      } else if (e.type === "subagent_started") {
        const id = str(p.id);
        if (id && !subagents.has(id)) subagents.set(id, { parentId: str(p.parentId), startSeq: e.seq });
      } else if (e.type === "subagent_completed") {
        const s = subagents.get(str(p.id) ?? "");
        if (s && !s.completion) {
          s.completion = e;
          merged.add(e.seq);
        }
      }
    }
  }
  const chains = new Map<string, readonly string[]>();
  const chainOf = (id: string | null): readonly string[] => {
    if (!id) return [];
    const known = chains.get(id);
    if (known) return known;
    const chain: string[] = [];
    const seen = new Set<string>();
    let cur: string | null = id;
    // Unknown ids (a subagent started before the loaded window) still nest one level.
    while (cur && !seen.has(cur) && chain.length < maxDepth) {
      seen.add(cur);
      chain.unshift(cur);
      cur = subagents.get(cur)?.parentId ?? null;
    }
    chains.set(id, chain);
    return chain;
  };

  // Pass 2: rows in seq order, gaps between segments.
  const rows: Row[] = [];
  const indexOfSeq = new Map<number, number>();
  const ancestorsOfSeq = new Map<number, readonly string[]>();
  const childCount = new Map<string, number>();
  const pushGap = (from: number, to: number) => {
    if (to >= from) rows.push({ kind: "gap", key: `gap-${from}-${to}`, from, to });
  };
  const first = segments[0]?.[0]?.seq;
  if (first !== undefined && first > 1 && !opts.startReached) pushGap(1, first - 1);
  let prevLast: number | null = null;
  for (const seg of segments) {
    if (prevLast !== null) pushGap(prevLast + 1, seg[0]!.seq - 1);
    for (const e of seg) {
      const p = rec(e.payload);
      const ancestors = e.type === "subagent_started" || e.type === "subagent_completed" ? chainOf(str(p.parentId)) : chainOf(str(p.subagentId));
      ancestorsOfSeq.set(e.seq, ancestors);
      if (merged.has(e.seq)) continue;
      for (const a of ancestors) childCount.set(a, (childCount.get(a) ?? 0) + 1);
      if (ancestors.some((a) => collapsed.has(a))) continue;
      const row: EventRow = { kind: "event", key: `e${e.seq}`, event: e, depth: ancestors.length, ancestors };
      if (e.type === "tool_call") row.result = resultOfCall.get(e.seq);
      if (e.type === "subagent_started") row.completion = subagents.get(str(p.id) ?? "")?.completion;
      indexOfSeq.set(e.seq, rows.length);
      if (row.result) indexOfSeq.set(row.result.seq, rows.length);
      if (row.completion) indexOfSeq.set(row.completion.seq, rows.length);
      rows.push(row);
    }
    prevLast = seg.at(-1)!.seq;
  }
  if (prevLast !== null && opts.knownLastSeq > prevLast) pushGap(prevLast + 1, opts.knownLastSeq);
  if (prevLast === null && opts.knownLastSeq > 0) pushGap(1, opts.knownLastSeq);
  for (const row of rows) {
    if (row.kind === "event" && row.event.type === "subagent_started") {
      row.childCount = childCount.get(str(rec(row.event.payload).id) ?? "") ?? 0;
    }
  }
  return { rows, indexOfSeq, ancestorsOfSeq };
}
