import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAuth } from "@/server/auth";
import type { SessionUser } from "@/server/auth/roles";
import { defaultHub, openStreamCount, runEventsResponse, runStatusResponse } from "@/server/streaming/responses";
import type { RunEventHub } from "@/server/streaming/run-event-hub";
import { createRepository, createRun, createUser, TEST_PASSWORD } from "@/server/testing/factories";
import { serveStream } from "./streams";

// Every stream slot is given back, on every path a client can leave by: before the answer
// (during the session and role checks), after the answer but before the stream's listeners
// exist, mid-stream, or when the stream fails. 1,000 such clients per endpoint, then an ordinary
// one opens: a leak of 64 (the per-account cap) would answer it 429.

let server: Server;
let port: number;
let user: SessionUser;
let cookie: string;
let runId: string;
const errors: unknown[] = [];

beforeAll(async () => {
  user = await createUser();
  const repo = await createRepository({ members: [[user, "viewer"]] });
  runId = (await createRun({ repositoryId: repo.id, status: "running" })).id;
  const res = await getAuth().api.signInEmail({ body: { email: user.email, password: TEST_PASSWORD }, asResponse: true });
  cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  await defaultHub().ready();
  server = createServer((req, res) => {
    if (serveStream(req, res, "http://127.0.0.1", (err) => errors.push(err))) return;
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** One client that sends the request and leaves at a moment chosen by `how`. */
function abortedClient(path: string, how: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const leave = () => socket.destroy();
    socket.once("close", () => resolve());
    socket.once("error", () => {});
    socket.once("connect", () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nAccept: text/event-stream\r\n\r\n`);
      switch (how % 5) {
        case 0: // at once: the server is still resolving the session
          return leave();
        case 1:
          return void setImmediate(leave);
        case 2: // somewhere in the checks, or just after the answer
          return void setTimeout(leave, Math.floor(Math.random() * 8));
        case 3: // once the answer's first bytes arrived: mid-stream
          return void socket.once("data", leave);
        default: // half-close first, then go
          socket.end();
          return void setTimeout(leave, Math.floor(Math.random() * 4));
      }
    });
  });
}

async function settle(timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while ((openStreamCount(user.id) > 0 || openStreamCount() > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

/** An ordinary viewer: the stream opens and says so. */
async function opens(path: string) {
  const aborted = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { cookie }, signal: aborted.signal });
  expect(res.status, await (res.status === 200 ? Promise.resolve("") : res.text())).toBe(200);
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toContain(": connected");
  aborted.abort();
  await reader.cancel().catch(() => {});
}

const pathOf = (endpoint: string) => endpoint.replace("<id>", runId);

describe("stream slots", () => {
  it.each(["/api/runs/stream", "/api/approvals/stream", "/api/runs/<id>/events"])("1,000 clients that leave early hold no slot of %s", { timeout: 120_000 }, async (endpoint) => {
    const path = pathOf(endpoint);
    const total = 1_000;
    const wave = 50;
    for (let start = 0; start < total; start += wave) {
      await Promise.all(Array.from({ length: wave }, (_, k) => abortedClient(path, start + k)));
    }
    await settle();
    expect(openStreamCount(user.id)).toBe(0);
    expect(openStreamCount()).toBe(0);
    await opens(path);
    await settle();
    expect(openStreamCount()).toBe(0);
    expect(errors).toEqual([]);
  });

  it("a stream that cannot start gives its slot back, and the next one opens", async () => {
    const broken = { subscribe: () => { throw new Error("hub down"); }, subscribeStatus: () => { throw new Error("hub down"); } } as unknown as RunEventHub;
    const deps = { hub: broken, user: async () => user };
    const req = () => new Request("http://127.0.0.1/x", { headers: { cookie } });
    await expect(runStatusResponse(req(), deps)).rejects.toThrow("hub down");
    await expect(runEventsResponse(req(), runId, deps)).rejects.toThrow("hub down");
    await settle();
    expect(openStreamCount(user.id)).toBe(0);
    await opens("/api/runs/stream");
  });

  it("a feed whose reading fails ends the stream and gives its slot back", async () => {
    await settle();
    const failing = {
      subscribeApprovals: () => ({ take: () => [], wait: () => Promise.reject(new Error("feed broke")), close: () => {}, closed: false }),
    } as unknown as RunEventHub;
    const { approvalsResponse } = await import("@/server/streaming/responses");
    const res = await approvalsResponse(new Request("http://127.0.0.1/x"), { hub: failing, user: async () => user });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow("feed broke");
    await settle();
    expect(openStreamCount(user.id)).toBe(0);
  });
});
