import type { Db } from "@/server/db";
import { RUN_EVENTS_CHANNEL } from "@/server/domain/events/append";
import { isTerminalRun } from "@/server/domain/runs/lifecycle";
import { chunkOf, readEventsAfter, readRunProgress, type EventChunk, type PreparedEvent } from "./event-rows";
import { ListenConnection } from "./listen-connection";
import { Mailbox, type MailboxLimits } from "./mailbox";
import { approvalFeed, type ApprovalSubscription } from "./approval-feed";
import type { ChangeFeed } from "./change-feed";
import { runStatusFeed, type StatusSubscription } from "./run-status-feed";

// The per-process fan-out: ONE LISTEN connection, any number of SSE
// subscribers. A notification carries {runId, seq}; for each burst the hub
// reads the new rows of that run once and hands the same prepared frames to
// every subscriber of the run. Rows are read from the database, never taken
// from the notification, so a lost notification costs latency, not events.

export type RunEventHubOptions = {
  connectionString: string;
  db: Db;
  /** Per-subscriber bound; past it the subscriber is dropped and reconnects. */
  limits?: Partial<MailboxLimits>;
  /**
   * Notifications within this window are served by one read and one write per
   * subscriber. Default: grows with the run's audience (5 ms alone, 50 ms for
   * 1,000 viewers): each write costs per subscriber, and fewer, larger writes
   * keep a busy process's latency lower than many small ones.
   */
  burstWindowMs?: number;
  /** How often the runs list hears of status changes. */
  statusWindowMs?: number;
  pingIntervalMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  log?: (line: string) => void;
};

/** One client's view of a run. `backlog`: it reads the database itself; `live`: the hub feeds it. */
export class RunSubscription extends Mailbox<EventChunk> {
  phase: "backlog" | "live" = "backlog";
  /** Set when new events were announced while reading the backlog: read again before going live. */
  dirty = false;
  /** The newest seq handed to this subscriber (or read by it, in the backlog phase). */
  lastQueuedSeq: number;
  /** The hub saw the run end: once this seq is sent, the stream is complete. */
  endAfterSeq: number | null = null;
  /**
   * Set by a live stream with room in its buffer: a burst goes straight to it,
   * skipping the queue and a wake-up (most deliveries, for readers keeping up).
   * Returns false when the stream has no room; the burst is queued instead.
   */
  sink: ((chunk: EventChunk) => boolean) | null = null;

  constructor(
    readonly runId: string,
    afterSeq: number,
    limits: MailboxLimits,
    onClose: (sub: RunSubscription, reason: string) => void,
  ) {
    super(limits, (reason) => onClose(this, reason));
    this.lastQueuedSeq = afterSeq;
  }

  goLive(lastSentSeq: number) {
    this.phase = "live";
    this.lastQueuedSeq = lastSentSeq;
  }

  /** Takes the burst's shared chunk when it follows on exactly; re-chunks the new part otherwise (rare). */
  deliver(chunk: EventChunk, rows: readonly PreparedEvent[], endSeq: number | null) {
    if (this.closed) return;
    if (chunk.lastSeq > this.lastQueuedSeq) {
      const fresh = chunk.firstSeq > this.lastQueuedSeq ? chunk : chunkOf(rows.filter((r) => r.seq > this.lastQueuedSeq));
      // Straight to the stream only when nothing is queued ahead of it (order).
      if (!(this.size === 0 && this.sink?.(fresh)) && !this.put([fresh])) return;
      this.lastQueuedSeq = fresh.lastSeq;
    }
    if (endSeq !== null) {
      this.endAfterSeq = endSeq;
      this.wake();
    }
  }
}

type RunState = {
  subs: Set<RunSubscription>;
  /** The newest seq announced for the run. */
  wantedSeq: number;
  /** Bumped per announcement, to tell "nothing new" from "news arrived while reading". */
  generation: number;
  fetching: boolean;
  timer: NodeJS.Timeout | null;
};

export type HubStats = {
  subscribers: number;
  /** Subscribers fed by the hub (the rest are still reading their backlog from the database). */
  live: number;
  runs: number;
  statusSubscribers: number;
  listenConnected: boolean;
  listenConnects: number;
  reads: number;
  dropped: number;
};

export class RunEventHub {
  private readonly runs = new Map<string, RunState>();
  private readonly listen: ListenConnection;
  private readonly limits: MailboxLimits;
  private readonly statusFeed: ChangeFeed;
  private readonly approvalFeed: ChangeFeed;
  private reads = 0;
  private dropped = 0;

  constructor(private readonly opts: RunEventHubOptions) {
    this.limits = { maxItems: opts.limits?.maxItems ?? 5_000, maxBytes: opts.limits?.maxBytes ?? 4 * 1024 * 1024 };
    this.statusFeed = runStatusFeed({ db: opts.db, windowMs: opts.statusWindowMs ?? 250, log: opts.log });
    this.approvalFeed = approvalFeed({ db: opts.db, windowMs: opts.statusWindowMs ?? 250, log: opts.log });
    this.listen = new ListenConnection({
      connectionString: opts.connectionString,
      channel: RUN_EVENTS_CHANNEL,
      applicationName: "airlock-run-events",
      pingIntervalMs: opts.pingIntervalMs,
      reconnectMinMs: opts.reconnectMinMs,
      reconnectMaxMs: opts.reconnectMaxMs,
      log: opts.log,
      onNotification: (payload) => this.onNotification(payload),
      onConnected: () => this.catchUpAll(),
    });
  }

  /** Starts listening (once); subscribers never wait for it: a (re)connect catches them up. */
  start() {
    this.listen.start();
  }

  ready() {
    this.start();
    return this.listen.ready();
  }

  subscribe(runId: string, afterSeq: number): RunSubscription {
    this.start();
    const sub = new RunSubscription(runId, afterSeq, this.limits, (s, reason) => this.remove(s, reason));
    let state = this.runs.get(runId);
    if (!state) {
      state = { subs: new Set(), wantedSeq: 0, generation: 0, fetching: false, timer: null };
      this.runs.set(runId, state);
    }
    state.subs.add(sub);
    return sub;
  }

  /** The runs list's feed of status changes, limited to the repositories the viewer may see. */
  subscribeStatus(visible: string[] | "all"): StatusSubscription {
    this.start();
    return this.statusFeed.subscribe(visible, this.limits);
  }

  /** /approvals' feed of new and changed approval requests, limited like the status feed. */
  subscribeApprovals(visible: string[] | "all"): ApprovalSubscription {
    this.start();
    return this.approvalFeed.subscribe(visible, this.limits);
  }

  stats(): HubStats {
    let subscribers = 0;
    let live = 0;
    for (const s of this.runs.values()) {
      subscribers += s.subs.size;
      for (const sub of s.subs) if (sub.phase === "live") live++;
    }
    return {
      subscribers,
      live,
      runs: this.runs.size,
      statusSubscribers: this.statusFeed.size,
      listenConnected: this.listen.isConnected,
      listenConnects: this.listen.connects,
      reads: this.reads,
      dropped: this.dropped,
    };
  }

  async stop() {
    for (const state of this.runs.values()) {
      if (state.timer) clearTimeout(state.timer);
      for (const sub of [...state.subs]) sub.close("shutdown");
    }
    this.statusFeed.stop();
    this.approvalFeed.stop();
    await this.listen.stop();
  }

  private remove(sub: RunSubscription, reason: string) {
    if (reason === "overflow") this.dropped++;
    const state = this.runs.get(sub.runId);
    if (!state) return;
    state.subs.delete(sub);
    if (state.subs.size === 0) {
      if (state.timer) clearTimeout(state.timer);
      this.runs.delete(sub.runId);
    }
  }

  private onNotification(raw: string) {
    let note: { runId?: unknown; seq?: unknown };
    try {
      note = JSON.parse(raw) as typeof note;
    } catch {
      return;
    }
    if (typeof note.runId !== "string") return;
    this.statusFeed.touch(note.runId);
    this.approvalFeed.touch(note.runId);
    const state = this.runs.get(note.runId);
    if (!state) return;
    const seq = typeof note.seq === "number" ? note.seq : Number.POSITIVE_INFINITY;
    this.announce(note.runId, state, seq);
  }

  private announce(runId: string, state: RunState, seq: number) {
    state.wantedSeq = Math.max(state.wantedSeq, seq);
    state.generation++;
    for (const sub of state.subs) if (sub.phase === "backlog") sub.dirty = true;
    if (state.timer || state.fetching) return;
    const window = this.opts.burstWindowMs ?? Math.min(100, 5 + Math.floor(state.subs.size / 10));
    state.timer = setTimeout(() => {
      state.timer = null;
      void this.fetchLoop(runId, state);
    }, window);
  }

  /** After (re)connecting: anything may have been missed, so every watched run reads until it is current. */
  private catchUpAll() {
    for (const [runId, state] of this.runs) this.announce(runId, state, Number.POSITIVE_INFINITY);
    this.statusFeed.resync();
    this.approvalFeed.resync();
  }

  private async fetchLoop(runId: string, state: RunState) {
    state.fetching = true;
    try {
      for (;;) {
        if (this.runs.get(runId) !== state) return;
        let from = Number.POSITIVE_INFINITY;
        for (const s of state.subs) if (s.phase === "live" && !s.closed) from = Math.min(from, s.lastQueuedSeq);
        if (from === Number.POSITIVE_INFINITY || state.wantedSeq <= from) return;
        const generation = state.generation;
        const rows = await readEventsAfter({ db: this.opts.db, runId, afterSeq: from });
        this.reads++;
        if (rows.length === 0) {
          // Nothing past `from`: the announcement is served (or was a catch-up probe).
          if (generation === state.generation) state.wantedSeq = from;
          continue;
        }
        let endSeq: number | null = null;
        if (rows.some((r) => r.runStatusTo && isTerminalRun(r.runStatusTo))) {
          const progress = await readRunProgress(this.opts.db, runId);
          if (progress && isTerminalRun(progress.status)) endSeq = progress.lastEventSeq;
        }
        const chunk = chunkOf(rows);
        for (const sub of [...state.subs]) if (sub.phase === "live") sub.deliver(chunk, rows, endSeq);
      }
    } catch (err) {
      this.opts.log?.(`reading events of run ${runId} failed: ${err instanceof Error ? err.message : String(err)}`);
      // Try again shortly; subscribers keep waiting rather than missing events.
      setTimeout(() => this.announce(runId, state, state.wantedSeq), 1_000).unref();
    } finally {
      state.fetching = false;
    }
  }
}

const globalForHub = globalThis as unknown as { airlockRunEventHub?: RunEventHub };

/** The process's hub, created on first use (survives Next dev's module reloads). */
export function getRunEventHub(create: () => RunEventHubOptions): RunEventHub {
  globalForHub.airlockRunEventHub ??= new RunEventHub(create());
  return globalForHub.airlockRunEventHub;
}
