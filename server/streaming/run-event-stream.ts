import type { Db } from "@/server/db";
import { defaultPage, readEventsAfter, readRunProgress, streamComplete, type EventChunk } from "./event-rows";
import type { RunEventHub, RunSubscription } from "./run-event-hub";
import { sseComment, sseFrame, sseRetry } from "./sse";
import { metrics, secondsBetween } from "@/server/observability/metrics";

// One client's SSE body for a run: the backlog after `afterSeq`, read from the
// database page by page, then live events from the hub, each frame with
// `id: <seq>`; a heartbeat comment while idle; `event: end` once the run is
// terminal and everything was sent. Pull-based: nothing is read or queued for a
// client that is not reading, beyond the hub's per-subscriber bound.

export type RunEventStreamOptions = {
  hub: RunEventHub;
  db: Db;
  runId: string;
  afterSeq: number;
  signal?: AbortSignal;
  heartbeatMs?: number;
  /** Reconnect delay EventSource should use. */
  retryMs?: number;
  page?: { limit: number; maxBytes: number };
  /** Called once when the stream ends for any reason (for connection accounting). */
  onClose?: () => void;
};

const encoder = new TextEncoder();

/** A live chunk written: how long since its first event was appended (the backlog is not live). */
const observeSent = (chunk: EventChunk) => metrics().sseAppendToSend.observe(secondsBetween(chunk.appendedAt, Date.now()));
const endFrame = (lastSeq: number) => encoder.encode(sseFrame({ event: "end", data: JSON.stringify({ lastSeq }) }));

export function createRunEventStream(opts: RunEventStreamOptions): ReadableStream<Uint8Array> {
  const { hub, db, runId } = opts;
  let sub: RunSubscription | null = null;
  let lastSent = opts.afterSeq;
  let heartbeat: NodeJS.Timeout | null = null;
  let finished = false;
  let ctrl: ReadableStreamDefaultController<Uint8Array> | null = null;

  const cleanup = () => {
    if (finished) return;
    finished = true;
    if (heartbeat) clearInterval(heartbeat);
    if (sub) sub.sink = null;
    sub?.close("client gone");
    opts.signal?.removeEventListener("abort", onAbort);
    opts.onClose?.();
  };
  const onAbort = () => {
    cleanup();
    try {
      ctrl?.close();
    } catch {
      // already closed or errored
    }
  };

  const finish = (controller: ReadableStreamDefaultController<Uint8Array>, last?: Uint8Array) => {
    if (finished) return;
    if (last) controller.enqueue(last);
    cleanup();
    controller.close();
  };

  const send = (controller: ReadableStreamDefaultController<Uint8Array>, rows: { seq: number; bytes: Uint8Array }[]) => {
    if (rows.length === 0) return;
    controller.enqueue(rows.length === 1 ? rows[0]!.bytes : Buffer.concat(rows.map((r) => r.bytes)));
    lastSent = rows.at(-1)!.seq;
  };

  // Reads the database until caught up, then hands over to the hub. A burst
  // announced while reading marks the subscription dirty: read once more, so
  // nothing committed between the last read and going live is skipped.
  async function pullBacklog(controller: ReadableStreamDefaultController<Uint8Array>, s: RunSubscription): Promise<boolean> {
    for (;;) {
      s.dirty = false;
      const rows = await readEventsAfter({ db, runId, afterSeq: lastSent, ...(opts.page ?? defaultPage) });
      if (finished) return true;
      if (rows.length > 0) {
        send(controller, rows);
        return true;
      }
      const progress = await readRunProgress(db, runId);
      if (finished) return true;
      if (progress === null) {
        finish(controller, endFrame(lastSent));
        return true;
      }
      if (streamComplete(progress, lastSent)) {
        finish(controller, endFrame(lastSent));
        return true;
      }
      // An append that committed after the read announces itself: either before
      // this point (dirty: read again) or after going live (the hub sends it).
      if (s.dirty) continue;
      s.goLive(lastSent);
      s.sink = (chunk) => {
        if (finished || (controller.desiredSize ?? 0) <= 0) return false;
        controller.enqueue(chunk.bytes);
        lastSent = chunk.lastSeq;
        observeSent(chunk);
        return true;
      };
      return false;
    }
  }

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (opts.signal?.aborted) {
          finished = true;
          controller.close();
          opts.onClose?.();
          return;
        }
        ctrl = controller;
        opts.signal?.addEventListener("abort", onAbort);
        try {
          sub = hub.subscribe(runId, lastSent);
        } catch (err) {
          cleanup();
          throw err;
        }
        // The first bytes go out at once, so clients (and proxies) see the stream open.
        controller.enqueue(encoder.encode(sseRetry(opts.retryMs ?? 2_000) + sseComment("connected")));
        heartbeat = setInterval(() => {
          if (!finished && (controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(sseComment("keepalive")));
        }, opts.heartbeatMs ?? 15_000);
        heartbeat.unref();
      },
      async pull(controller) {
        const s = sub;
        if (finished || !s) return;
        try {
          if (s.phase === "backlog" && (await pullBacklog(controller, s))) return;
          while (!finished) {
            const chunks = s.take();
            if (chunks.length > 0) {
              controller.enqueue(chunks.length === 1 ? chunks[0]!.bytes : Buffer.concat(chunks.map((c) => c.bytes)));
              lastSent = chunks.at(-1)!.lastSeq;
              observeSent(chunks[0]!);
              if (s.endAfterSeq !== null && lastSent >= s.endAfterSeq) finish(controller, endFrame(lastSent));
              return;
            }
            if (s.closed) {
              // Dropped for falling behind: the client reconnects with Last-Event-ID.
              finish(controller);
              return;
            }
            if (s.endAfterSeq !== null && lastSent >= s.endAfterSeq) {
              finish(controller, endFrame(lastSent));
              return;
            }
            await s.wait();
          }
        } catch (err) {
          if (finished) return;
          cleanup();
          controller.error(err);
        }
      },
      cancel() {
        cleanup();
      },
    },
    { highWaterMark: 1 },
  );
}
