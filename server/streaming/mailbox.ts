// A bounded, single-reader queue between the fan-out (producer) and one
// client's stream (consumer). When the client reads slower than events arrive
// and the bound is reached, the mailbox is dropped instead of growing: the
// client reconnects with Last-Event-ID and catches up from the database.

export type MailboxLimits = { maxItems: number; maxBytes: number };

/** An item: its bytes, and how many events it carries (counted against `maxItems`; default 1). */
export type MailboxItem = { bytes: Uint8Array; count?: number };

export class Mailbox<T extends MailboxItem> {
  private items: T[] = [];
  private bytes = 0;
  private weight = 0;
  private waiter: (() => void) | null = null;
  /** Why the mailbox stopped taking items; null while open. */
  closedReason: string | null = null;

  constructor(
    private readonly limits: MailboxLimits,
    private readonly onClose: (reason: string) => void = () => {},
  ) {}

  get closed() {
    return this.closedReason !== null;
  }

  /** Events held (the sum of the items' counts). */
  get size() {
    return this.weight;
  }

  /** Adds items; over the bound the mailbox closes (reason "overflow") and drops what it held. */
  put(items: readonly T[]): boolean {
    if (this.closed) return false;
    let added = 0;
    let weight = 0;
    for (const item of items) {
      added += item.bytes.byteLength;
      weight += item.count ?? 1;
    }
    if (this.weight + weight > this.limits.maxItems || this.bytes + added > this.limits.maxBytes) {
      this.close("overflow");
      return false;
    }
    for (const item of items) this.items.push(item);
    this.bytes += added;
    this.weight += weight;
    this.wake();
    return true;
  }

  /** Everything queued so far, oldest first. */
  take(): T[] {
    const out = this.items;
    this.items = [];
    this.bytes = 0;
    this.weight = 0;
    return out;
  }

  /** Resolves when items arrive, `wake()` is called, or the mailbox closes. */
  wait(): Promise<void> {
    if (this.items.length > 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  wake() {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  close(reason: string) {
    if (this.closed) return;
    this.closedReason = reason;
    this.items = [];
    this.bytes = 0;
    this.weight = 0;
    this.onClose(reason);
    this.wake();
  }
}
