import { describe, expect, it } from "vitest";
import { openLiveFeed, type ConnectionState } from "./live-feed";

// The live feed against a scripted EventSource: a dropped connection is left to the browser, a
// refused one (closed for good) is opened again after a growing backoff, and stopping ends it.

class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static made: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  readonly listeners = new Map<string, (m: MessageEvent<string>) => void>();
  constructor(readonly url: string) {
    FakeEventSource.made.push(this);
  }
  addEventListener(type: string, fn: (m: MessageEvent<string>) => void) {
    this.listeners.set(type, fn);
  }
  close() {
    this.closed = true;
    this.readyState = FakeEventSource.CLOSED;
  }
  open() {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.();
  }
  drop() {
    this.readyState = FakeEventSource.CONNECTING;
    this.onerror?.();
  }
  refuse() {
    this.readyState = FakeEventSource.CLOSED;
    this.onerror?.();
  }
}

function harness() {
  FakeEventSource.made = [];
  const scheduled: { fn: () => void; ms: number; cleared: boolean; fired: boolean }[] = [];
  const states: ConnectionState[] = [];
  const events: string[] = [];
  let opens = 0;
  const stop = openLiveFeed({
    url: "/api/runs/stream",
    on: { run: (m) => events.push(m.data) },
    onOpen: () => opens++,
    onState: (s) => states.push(s),
    EventSourceImpl: FakeEventSource as unknown as typeof EventSource,
    timers: {
      set: (fn, ms) => {
        const t = { fn, ms, cleared: false, fired: false };
        scheduled.push(t);
        return t;
      },
      clear: (t) => void ((t as { cleared: boolean }).cleared = true),
    },
  });
  /** Runs the one retry that is due (there is never more than one). */
  const fire = () => {
    const due = scheduled.filter((t) => !t.cleared && !t.fired);
    expect(due).toHaveLength(1);
    due[0]!.fired = true;
    due[0]!.fn();
  };
  return { stop, scheduled, states, events, opens: () => opens, fire, sources: FakeEventSource.made };
}

describe("openLiveFeed", () => {
  it("hands named events to their handlers and reports live", () => {
    const h = harness();
    h.sources[0]!.open();
    h.sources[0]!.listeners.get("run")!({ data: '{"id":"r1"}' } as MessageEvent<string>);
    expect(h.events).toEqual(['{"id":"r1"}']);
    expect(h.states).toEqual(["live"]);
    expect(h.opens()).toBe(1);
  });

  it("leaves a dropped connection to the browser, but reopens a refused one with a growing backoff", () => {
    const h = harness();
    h.sources[0]!.open();
    h.sources[0]!.drop();
    expect(h.scheduled).toHaveLength(0);
    expect(h.states.at(-1)).toBe("reconnecting");

    h.sources[0]!.refuse();
    expect(h.states.at(-1)).toBe("refused");
    h.fire();
    expect(h.sources).toHaveLength(2);
    h.sources[1]!.refuse();
    h.fire();
    h.sources[2]!.refuse();
    expect(h.scheduled.map((t) => t.ms)).toEqual([1_000, 2_000, 4_000]);

    h.fire();
    h.sources[3]!.open();
    expect(h.opens()).toBe(2);
    expect(h.states.at(-1)).toBe("live");
    // A success resets the backoff.
    h.sources[3]!.refuse();
    expect(h.scheduled.at(-1)!.ms).toBe(1_000);
  });

  it("backs off to at most 30 s, and stopping closes the source and cancels a pending retry", () => {
    const h = harness();
    for (let i = 0; i < 8; i++) {
      h.sources.at(-1)!.refuse();
      h.fire();
    }
    expect(h.scheduled.at(-1)!.ms).toBe(30_000);
    h.sources.at(-1)!.refuse();
    const pending = h.scheduled.at(-1)!;
    h.stop();
    expect(pending.cleared).toBe(true);
    expect(h.sources.at(-1)!.closed).toBe(true);
  });
});
