import type { IncomingMessage, ServerResponse } from "node:http";
import { approvalsResponse, runEventsResponse, runStatusResponse } from "@/server/streaming/responses";
import { metrics } from "@/server/observability/metrics";

// The SSE endpoints, served by the web server's own node:http layer rather than by Next's route
// handlers. Next pipes a route's body through a WritableStream (a promise chain per chunk); with
// a thousand viewers on one run that per-chunk cost set the latency. Here the same Response (same
// permission checks, same stream, tested through runEventsResponse) is written to the socket
// with one read and one write per chunk.

type StreamHandler = (req: Request) => Promise<Response>;

/** The gauge's label: the endpoint, never the run id (bounded cardinality). */
const streamName = (url: string | undefined) => (url?.startsWith("/api/runs/stream") ? "runs" : url?.startsWith("/api/approvals/stream") ? "approvals" : "run_events");

const runEvents = /^\/api\/runs\/([^/]+)\/events$/;

/** The handler for an SSE request, or null: everything else is Next's. */
export function streamHandler(method: string | undefined, pathname: string): StreamHandler | null {
  if (method !== "GET" && method !== "HEAD") return null;
  if (pathname === "/api/runs/stream") return (req) => runStatusResponse(req);
  if (pathname === "/api/approvals/stream") return (req) => approvalsResponse(req);
  const m = runEvents.exec(pathname);
  if (m) {
    let runId: string;
    try {
      runId = decodeURIComponent(m[1]!);
    } catch {
      return null;
    }
    return (req) => runEventsResponse(req, runId);
  }
  return null;
}

/** A web Request for a node request: headers, URL, and a signal that aborts when the client goes. */
function webRequest(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const aborted = new AbortController();
  res.once("close", () => aborted.abort());
  return new Request(new URL(req.url ?? "/", origin), { method: req.method, headers, signal: aborted.signal });
}

/** The client is gone: its socket closed before (or while) the answer was written. */
const closed = (res: ServerResponse) => res.destroyed || res.closed || res.socket?.destroyed === true;

/**
 * Writes a web Response to a node response, honouring backpressure, and stops when the client
 * goes. Whatever happens (the client left before the answer, before the `close` listener was
 * attached, mid-stream, or a read failed), a body not read to its end is cancelled, so the
 * stream's own cleanup runs and its slot is given back.
 */
export async function sendResponse(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const body = response.body;
  if (!body || head || closed(res)) {
    await body?.cancel().catch(() => {});
    if (!closed(res)) {
      res.statusCode = response.status;
      response.headers.forEach((value, name) => res.appendHeader(name, value));
      res.end();
    }
    return;
  }
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.appendHeader(name, value));
  const reader = body.getReader();
  const open = metrics().sseStreamsOpen.labels({ stream: streamName(res.req?.url) });
  open.inc();
  let ended = false;
  const stop = () => {
    if (!ended) void reader.cancel().catch(() => {});
  };
  const gone = new Promise<void>((resolve) => res.once("close", resolve));
  res.once("close", stop);
  try {
    res.flushHeaders();
    for (;;) {
      if (closed(res)) break;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      if (closed(res)) break;
      if (!res.write(value)) await Promise.race([new Promise((r) => res.once("drain", r)), gone]);
    }
  } finally {
    open.dec();
    res.off("close", stop);
    if (!ended) await reader.cancel().catch(() => {});
    if (!closed(res)) res.end();
  }
}

/** Serves the request if it is an SSE endpoint; returns false to hand it to Next. */
export function serveStream(req: IncomingMessage, res: ServerResponse, origin: string, onError: (err: unknown) => void): boolean {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const handler = streamHandler(req.method, q === -1 ? url : url.slice(0, q));
  if (!handler) return false;
  const request = webRequest(req, res, origin);
  handler(request)
    .then((response) => sendResponse(res, response, req.method === "HEAD"))
    .catch((err: unknown) => {
      onError(err);
      if (!res.headersSent) {
        res.writeHead(500, { "Content-Type": "application/json", "Cache-Control": "no-store" });
        res.end(JSON.stringify({ error: { message: "The stream failed; retry shortly." } }));
      } else res.destroy();
    });
  return true;
}
