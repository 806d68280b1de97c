// The events a run page holds: windows loaded by seq (the newest first, older
// ones on scroll, any window after a jump) plus live events. Kept as sorted,
// contiguous segments so gaps are explicit and live appends cost O(1). Mutable
// with a version number, read through useSyncExternalStore: a 100,000-event run
// is never copied per update.

export type TEvent = {
  seq: number;
  type: string;
  payload: unknown;
  attemptId: string | null;
  /** Milliseconds since the epoch. */
  at: number;
};

/** An event as runs.events (Date) or the SSE stream (ISO string) delivers it. */
export type WireEvent = { seq: number; type: string; payload: unknown; attemptId: string | null; createdAt: Date | string };

export const fromWire = (e: WireEvent): TEvent => ({
  seq: e.seq,
  type: e.type,
  payload: e.payload,
  attemptId: e.attemptId,
  at: typeof e.createdAt === "string" ? Date.parse(e.createdAt) : e.createdAt.getTime(),
});

export class TranscriptStore {
  private segments: TEvent[][] = [];
  private listeners = new Set<() => void>();
  version = 0;
  /** The newest seq known to exist (from the run row or any event seen). */
  knownLastSeq = 0;
  /** Nothing exists before the first loaded event (seq 1 loaded, or the server said so). */
  startReached = false;

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = () => this.version;

  private changed() {
    this.version++;
    for (const l of this.listeners) l();
  }

  get segmentList(): readonly (readonly TEvent[])[] {
    return this.segments;
  }

  get size() {
    let n = 0;
    for (const s of this.segments) n += s.length;
    return n;
  }

  get firstSeq(): number | null {
    return this.segments[0]?.[0]?.seq ?? null;
  }

  get lastSeq(): number | null {
    return this.segments.at(-1)?.at(-1)?.seq ?? null;
  }

  has(seq: number): boolean {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const seg = this.segments[mid]!;
      if (seq < seg[0]!.seq) hi = mid - 1;
      else if (seq > seg.at(-1)!.seq) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** Adds events (any order, duplicates ignored); returns how many were new. */
  add(incoming: readonly TEvent[], opts: { silent?: boolean } = {}): number {
    if (incoming.length === 0) return 0;
    const last = this.segments.at(-1);
    const lastSeq = last?.at(-1)?.seq;
    let added = 0;
    // The common case, live events right after the newest: append in place.
    if (last && lastSeq !== undefined && incoming[0]!.seq === lastSeq + 1 && isContiguous(incoming)) {
      for (const e of incoming) last.push(e);
      added = incoming.length;
    } else {
      const bySeq = new Map<number, TEvent>();
      for (const seg of this.segments) for (const e of seg) bySeq.set(e.seq, e);
      for (const e of incoming) {
        if (!bySeq.has(e.seq)) {
          bySeq.set(e.seq, e);
          added++;
        }
      }
      if (added === 0) return 0;
      const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
      const segments: TEvent[][] = [];
      for (const e of all) {
        const cur = segments.at(-1);
        if (cur && cur.at(-1)!.seq + 1 === e.seq) cur.push(e);
        else segments.push([e]);
      }
      this.segments = segments;
    }
    const newest = this.lastSeq ?? 0;
    if (newest > this.knownLastSeq) this.knownLastSeq = newest;
    if (this.firstSeq === 1) this.startReached = true;
    if (!opts.silent) this.changed();
    return added;
  }

  /** The server has nothing before the first loaded event. */
  markStart() {
    if (this.startReached) return;
    this.startReached = true;
    this.changed();
  }

  /** The server has nothing after the newest loaded event (the run's counter was ahead of its rows). */
  markEnd() {
    const last = this.lastSeq ?? 0;
    if (this.knownLastSeq <= last) return;
    this.knownLastSeq = last;
    this.changed();
  }

  noteKnownLast(seq: number) {
    if (seq <= this.knownLastSeq) return;
    this.knownLastSeq = seq;
    this.changed();
  }
}

function isContiguous(events: readonly TEvent[]) {
  for (let i = 1; i < events.length; i++) if (events[i]!.seq !== events[i - 1]!.seq + 1) return false;
  return true;
}
