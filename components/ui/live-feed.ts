// A live feed over server-sent events that outlasts refusals. EventSource reconnects by itself
// after a dropped connection, but a refused one (429: the account's stream cap; 503: the server
// is full; 401 after sign-out) closes it for good. This opens a new one after a backoff (1 s,
// doubling to 30 s) until the caller stops it. `onOpen` runs on every (re)connection, so the
// caller can refetch what it missed meanwhile; `url` is read at each new connection, so it can
// say where to resume.

/** What a list shows: live, or not (yet). */
export type FeedState = "live" | "connecting";
/** `reconnecting`: the browser is retrying a dropped connection; `refused`: we retry after a backoff. */
export type ConnectionState = "live" | "reconnecting" | "refused";

export const feedState = (s: ConnectionState): FeedState => (s === "live" ? "live" : "connecting");

export type LiveFeedOptions = {
  url: string | (() => string);
  /** Named events and their handlers. */
  on: Record<string, (message: MessageEvent<string>) => void>;
  onOpen?: () => void;
  onState: (state: ConnectionState) => void;
  /** For tests: the EventSource class and the timer functions. */
  EventSourceImpl?: typeof EventSource;
  timers?: { set: (fn: () => void, ms: number) => unknown; clear: (handle: unknown) => void };
};

export function openLiveFeed(opts: LiveFeedOptions): () => void {
  const ES = opts.EventSourceImpl ?? EventSource;
  const timers = opts.timers ?? { set: (fn: () => void, ms: number) => setTimeout(fn, ms), clear: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>) };
  let source: EventSource | null = null;
  let retry: unknown = null;
  let backoff = 1_000;
  let stopped = false;

  const connect = () => {
    retry = null;
    if (stopped) return;
    const es = new ES(typeof opts.url === "string" ? opts.url : opts.url());
    source = es;
    es.onopen = () => {
      backoff = 1_000;
      opts.onState("live");
      opts.onOpen?.();
    };
    es.onerror = () => {
      if (es.readyState !== ES.CLOSED) return opts.onState("reconnecting"); // the browser retries this one itself
      opts.onState("refused");
      retry = timers.set(connect, backoff);
      backoff = Math.min(backoff * 2, 30_000);
    };
    for (const [type, handler] of Object.entries(opts.on)) es.addEventListener(type, handler as EventListener);
  };
  connect();
  return () => {
    stopped = true;
    source?.close();
    if (retry !== null) timers.clear(retry);
  };
}
