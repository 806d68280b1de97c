// A single-consumer async queue: adapters push events as they happen, the
// worker reads them with `for await`. Events are buffered until read; the
// iterator ends once the channel is closed and drained.

export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private readonly waiters: Array<(result: IteratorResult<T>) => void> = [];
  private closed = false;
  private detached = false;
  private iterated = false;

  constructor(private readonly onEvent?: (event: T) => void) {}

  get isClosed(): boolean {
    return this.closed;
  }

  push(event: T): void {
    if (this.closed) return;
    if (this.onEvent) {
      // The callback's failure is the caller's to handle; it must not stop the session.
      try {
        this.onEvent(event);
      } catch {
        /* ignored on purpose */
      }
    }
    if (this.detached) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.buffer.push(event);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new Error("A session's events can be iterated once");
    this.iterated = true;
    return {
      next: () => {
        if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift() as T, done: false });
        if (this.closed || this.detached) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
      // A consumer that breaks out stops buffering (onEvent still fires).
      return: () => {
        this.detached = true;
        this.buffer.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
