import { Mailbox, type MailboxLimits } from "./mailbox";
import { sseFrame } from "./sse";

// A live feed of status changes for a list page (the runs list, the approvals queue), fed by
// the same run-event notifications as the run streams: the runs touched in the last window are
// read once (one query for all of them, by `read`), and each item that is new or whose status
// changed is sent to every viewer allowed to see its repository.

export type FeedFrame = { bytes: Uint8Array };

export class FeedSubscription extends Mailbox<FeedFrame> {
  constructor(
    readonly visible: ReadonlySet<string> | "all",
    limits: MailboxLimits,
    onClose: (sub: FeedSubscription) => void,
  ) {
    super(limits, () => onClose(this));
  }

  sees(repositoryId: string) {
    return this.visible === "all" || this.visible.has(repositoryId);
  }
}

/** One item of a feed, as `read` returns it: `data` is what the browser receives. */
export type FeedItem = { key: string; status: string; repositoryId: string; data: unknown };

export type ChangeFeedOptions = {
  /** The SSE event name of a change (`run`, `approval`). */
  event: string;
  /** The current items of these runs. */
  read: (runIds: string[]) => Promise<FeedItem[]>;
  /** What `read` reads, for the log line when it fails. */
  what: string;
  windowMs: number;
  log?: (line: string) => void;
};

const encoder = new TextEncoder();
const resyncFrame = { bytes: encoder.encode(sseFrame({ event: "resync", data: "{}" })) };
/** Remember this many statuses; past it the memory is cleared (costs one redundant frame per item). */
const maxRemembered = 10_000;

export class ChangeFeed {
  private readonly subs = new Set<FeedSubscription>();
  private readonly pending = new Set<string>();
  private readonly lastStatus = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;

  constructor(private readonly opts: ChangeFeedOptions) {}

  get size() {
    return this.subs.size;
  }

  subscribe(visible: string[] | "all", limits: MailboxLimits): FeedSubscription {
    const sub = new FeedSubscription(visible === "all" ? "all" : new Set(visible), limits, (s) => this.subs.delete(s));
    this.subs.add(sub);
    return sub;
  }

  /** A run had new events: its items may have changed. */
  touch(runId: string) {
    if (this.subs.size === 0) return;
    this.pending.add(runId);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.windowMs);
    this.timer.unref();
  }

  /** Notifications may have been missed: every viewer reloads. */
  resync() {
    for (const sub of [...this.subs]) sub.put([resyncFrame]);
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    for (const sub of [...this.subs]) sub.close("shutdown");
  }

  private async flush() {
    this.timer = null;
    if (this.flushing) {
      this.timer = setTimeout(() => void this.flush(), this.opts.windowMs);
      return;
    }
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length === 0 || this.subs.size === 0) return;
    this.flushing = true;
    try {
      const items = await this.opts.read(ids);
      if (this.lastStatus.size > maxRemembered) this.lastStatus.clear();
      for (const item of items) {
        if (this.lastStatus.get(item.key) === item.status) continue;
        this.lastStatus.set(item.key, item.status);
        const frame = { bytes: encoder.encode(sseFrame({ event: this.opts.event, data: JSON.stringify(item.data) })) };
        for (const sub of [...this.subs]) if (sub.sees(item.repositoryId)) sub.put([frame]);
      }
    } catch (err) {
      this.opts.log?.(`reading ${this.opts.what} failed: ${err instanceof Error ? err.message : String(err)}`);
      this.resync();
    } finally {
      this.flushing = false;
    }
  }
}
