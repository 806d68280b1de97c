import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendResponse, streamHandler } from "./streams";

// The web server's SSE transport: which requests it takes from Next, and how a stream's bytes
// reach the socket (in order, with backpressure, stopping when the client goes). The streams'
// own behaviour (permissions, resume, fan-out) is tested through streamHandler against a real
// PostgreSQL in server/streaming/*.int.test.ts, and in the browser by e2e/run-view.spec.ts.

describe("streamHandler", () => {
  it("takes exactly the three SSE endpoints, for GET and HEAD", () => {
    for (const path of ["/api/runs/stream", "/api/approvals/stream", "/api/runs/run_1/events", "/api/runs/a%20b/events"]) {
      expect(streamHandler("GET", path), path).not.toBeNull();
      expect(streamHandler("HEAD", path), path).not.toBeNull();
      expect(streamHandler("POST", path), path).toBeNull();
    }
    for (const path of ["/api/runs", "/api/runs/x/events/more", "/api/runs//events", "/api/trpc/runs.list", "/runs/x/events", "/api/runs/%E0%A4%A/events"]) {
      expect(streamHandler("GET", path), path).toBeNull();
    }
  });
});

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(null));
  server = null;
});

async function serve(response: () => Response): Promise<string> {
  server = createServer((req, res) => void sendResponse(res, response(), req.method === "HEAD"));
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const until = async (pred: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("sendResponse", () => {
  it("writes status, headers and every chunk in order, then ends", async () => {
    const chunks = ["retry: 2000\n\n", "id: 1\ndata: a\n\n", "id: 2\ndata: b\n\n"];
    const url = await serve(
      () =>
        new Response(new ReadableStream({ start: (c) => (chunks.forEach((s) => c.enqueue(new TextEncoder().encode(s))), c.close()) }), {
          status: 200,
          headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform" },
        }),
    );
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(await res.text()).toBe(chunks.join(""));
  });

  it("sends a refusal as is", async () => {
    const url = await serve(() => Response.json({ error: { message: "Sign in to continue." } }, { status: 401 }));
    const res = await fetch(url);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { message: "Sign in to continue." } });
  });

  it("cancels the stream when the client goes, and sends no body to HEAD", async () => {
    let cancelled = 0;
    const endless = () =>
      new Response(
        new ReadableStream({
          pull: async (c) => {
            await new Promise((r) => setTimeout(r, 5));
            c.enqueue(new TextEncoder().encode(": keepalive\n\n"));
          },
          cancel: () => void cancelled++,
        }),
      );
    const url = await serve(endless);
    const aborted = new AbortController();
    const res = await fetch(url, { signal: aborted.signal });
    const reader = res.body!.getReader();
    await reader.read();
    aborted.abort();
    await until(() => cancelled === 1);

    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    await until(() => cancelled === 2);
  });

  it("stops reading the stream while a slow client does not read (backpressure)", async () => {
    let pulls = 0;
    const chunk = new Uint8Array(64 * 1024).fill(97);
    const url = await serve(
      () =>
        new Response(
          new ReadableStream({
            pull: (c) => {
              pulls++;
              c.enqueue(chunk);
            },
          }),
        ),
    );
    // A client that opens the response and then reads nothing.
    const paused = await new Promise<IncomingMessage>((resolve) => request(url, (res) => (res.pause(), resolve(res))).end());
    await new Promise((r) => setTimeout(r, 500));
    const stalled = pulls;
    await new Promise((r) => setTimeout(r, 300));
    // Socket buffers hold some megabytes at most; without backpressure this runs into the thousands.
    expect(stalled).toBeLessThan(200);
    expect(pulls - stalled).toBeLessThanOrEqual(1);
    paused.resume();
    await until(() => pulls > stalled + 10);
    paused.destroy();
  });
});
