import type { IncomingMessage, ServerResponse } from "node:http";
import { approvalsResponse, runEventsResponse, runStatusResponse } from "@/server/streaming/responses";

// The SSE endpoints, served by the web server's own node:http layer rather than by Next's route
// handlers. Next pipes a route's body through a WritableStream (a promise chain per chunk); with
// a thousand viewers on one run that per-chunk cost set the latency. Here the same Response (same
// permission checks, same stream, tested through runEventsResponse) is written to the socket
// with one read and one write per chunk.

type StreamHandler = (req: Request) => Promise<Response>;

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

/** Writes a web Response to a node response, honouring backpressure, and stops when the client goes. */
export async function sendResponse(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.appendHeader(name, value));
  if (!response.body || head) {
    res.end();
    await response.body?.cancel();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const gone = new Promise<void>((resolve) => res.once("close", resolve));
  res.once("close", () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await Promise.race([new Promise((r) => res.once("drain", r)), gone]);
    }
  } finally {
    if (!res.destroyed) res.end();
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
