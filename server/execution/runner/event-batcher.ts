// Collects an attempt's events for a few milliseconds and writes each batch in one transaction
// (one NOTIFY, one seq range), so a chatty agent costs one commit per batch instead of one per
// line. Writes are serialised: batches land in the order their events arrived.
//
// Nothing is dropped silently. A failed write is retried (the database may be restarting); a
// batch that still fails is written one event at a time, so one event the database refuses
// cannot take the others with it, and an event that cannot be stored is replaced by a
// placeholder saying so. Every such loss is counted (`lost`) and reported through onError, and
// later batches are still written. Only a fatal failure (the attempt was fenced off: a newer
// worker owns the transcript) stops writing: later events are dropped and `failure` is set.

export type BatchFailure = { fatal: boolean; lost: number };

export type EventBatcherOptions<T> = {
  flushMs: number;
  maxBatch: number;
  write: (events: T[]) => Promise<void>;
  onError: (err: unknown, failure: BatchFailure) => void;
  /** A failure that must not be retried and ends all writing. */
  isFatal?: (err: unknown) => boolean;
  /** What stands in for an event that could not be stored, so the gap shows in the transcript. */
  placeholder?: (event: T, err: unknown) => T;
  /** Waits between tries of a failed batch (the first try is immediate). */
  retryDelaysMs?: readonly number[];
};

const defaultRetryDelaysMs = [50, 250, 1000];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class EventBatcher<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Set by a fatal failure: nothing more is written. */
  failure: unknown = undefined;
  /** Events that could not be stored (a placeholder stands in for each when it could be). */
  lost = 0;
  /** The last non-fatal write failure, when any event was lost. */
  lastError: unknown = undefined;

  constructor(private readonly opts: EventBatcherOptions<T>) {}

  push(event: T): void {
    if (this.failure !== undefined) return;
    this.buffer.push(event);
    if (this.buffer.length >= this.opts.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.opts.flushMs);
  }

  /** Writes whatever is buffered; resolves once every earlier batch is written (or given up on). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) this.chain = this.chain.then(() => this.writeBatch(batch));
    return this.chain;
  }

  private isFatal(err: unknown): boolean {
    return this.opts.isFatal?.(err) ?? false;
  }

  private fatal(err: unknown) {
    this.failure = err;
    this.buffer = [];
    this.opts.onError(err, { fatal: true, lost: 0 });
  }

  private async writeBatch(batch: T[]): Promise<void> {
    if (this.failure !== undefined) return;
    let err: unknown;
    for (const delay of [0, ...(this.opts.retryDelaysMs ?? defaultRetryDelaysMs)]) {
      if (delay > 0) await sleep(delay);
      try {
        await this.opts.write(batch);
        return;
      } catch (e) {
        if (this.isFatal(e)) return this.fatal(e);
        err = e;
      }
    }
    // The batch as a whole keeps failing: find the events the database refuses, keep the rest.
    // Three refusals in a row mean the database itself is failing, not one event: the rest of the
    // batch is counted lost without trying each (a dead connection would take minutes per try).
    let lost = 0;
    let inARow = 0;
    for (const event of batch) {
      if (inARow >= 3) {
        lost++;
        continue;
      }
      try {
        await this.opts.write([event]);
        inARow = 0;
        continue;
      } catch (e) {
        if (this.isFatal(e)) return this.fatal(e);
        err = e;
      }
      lost++;
      inARow++;
      const stand = this.opts.placeholder?.(event, err);
      if (stand !== undefined) {
        try {
          await this.opts.write([stand]);
        } catch (e) {
          if (this.isFatal(e)) return this.fatal(e);
        }
      }
    }
    if (lost === 0) return;
    this.lost += lost;
    this.lastError = err;
    this.opts.onError(err, { fatal: false, lost });
  }
}
