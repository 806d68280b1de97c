// Server-sent events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html).
// Pure: no I/O, so the wire format is unit-tested on its own.

/** Headers every SSE response carries. `no-transform` stops Next (and proxies) from gzipping the stream. */
export const sseHeaders: Record<string, string> = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
};

// An event name is a single line; anything else could end the frame early.
const safeEventName = (name: string) => name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || "message";

/**
 * One frame. `data` may span lines: each becomes its own `data:` line, so a
 * newline inside never ends the frame (JSON from JSON.stringify has none).
 */
export function sseFrame(frame: { id?: number | string; event?: string; data: string }): string {
  let out = "";
  if (frame.id !== undefined) out += `id: ${String(frame.id).replace(/[\r\n]/g, "")}\n`;
  if (frame.event) out += `event: ${safeEventName(frame.event)}\n`;
  for (const line of frame.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line: ignored by EventSource, keeps proxies and load balancers from timing out. */
export const sseComment = (text: string) => `: ${text.replace(/[\r\n]/g, " ")}\n\n`;

/** How long EventSource waits before reconnecting after the stream ends. */
export const sseRetry = (ms: number) => `retry: ${Math.max(0, Math.floor(ms))}\n\n`;

export type LastEventId = { ok: true; seq: number } | { ok: false; reason: string };

/**
 * Where a client resumes: the `Last-Event-ID` header (set by EventSource on
 * reconnect) wins over `?lastEventId=` (the page's first connection, after the
 * events it already loaded). Absent means "from the start".
 */
export function parseLastEventId(req: Request): LastEventId {
  const header = req.headers.get("last-event-id");
  const query = new URL(req.url).searchParams.get("lastEventId");
  const raw = (header ?? query ?? "").trim();
  if (raw === "") return { ok: true, seq: 0 };
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > 2_147_483_647) {
    return { ok: false, reason: "Last-Event-ID must be an event sequence number" };
  }
  return { ok: true, seq: Number(raw) };
}
