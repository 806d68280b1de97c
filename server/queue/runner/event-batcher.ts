// Collects an attempt's events for a few milliseconds and writes each batch in one transaction
// (one NOTIFY, one seq range), so a chatty agent costs one commit per batch instead of one per
// line. Writes are serialised: batches land in the order their events arrived. After a write
// fails (e.g. the attempt was fenced off), later events are dropped and `failure` is set.

export class EventBatcher<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  failure: unknown = undefined;

  constructor(
    private readonly opts: {
      flushMs: number;
      maxBatch: number;
      write: (events: T[]) => Promise<void>;
      onError: (err: unknown) => void;
    },
  ) {}

  push(event: T): void {
    if (this.failure !== undefined) return;
    this.buffer.push(event);
    if (this.buffer.length >= this.opts.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.opts.flushMs);
  }

  /** Writes whatever is buffered; resolves once every earlier batch is written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      this.chain = this.chain.then(async () => {
        if (this.failure !== undefined) return;
        try {
          await this.opts.write(batch);
        } catch (err) {
          this.failure = err;
          this.opts.onError(err);
        }
      });
    }
    return this.chain;
  }
}
