import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelGateway, startModelGateway } from "./model-gateway";

// The gateway on a real Unix socket in front of a real HTTP upstream (a TEST DOUBLE for the
// model provider that records what reached it).

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

let dir: string;
let upstream: Server;
let seen: Seen[];
let gateway: ModelGateway | undefined;
let socketPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "gateway-test-"));
  socketPath = join(dir, "model.sock");
  seen = [];
  upstream = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url?.endsWith("/stream")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("event: message_start\ndata: {}\n\n");
        setTimeout(() => res.end("event: message_stop\ndata: {}\n\n"), 20);
        return;
      }
      if (req.url?.startsWith("/v1/messages") && body.includes('"stream":true')) {
        // The Messages API's streamed shape: the model and input usage first, output usage in deltas.
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
        res.write('event: message_start\ndata: {"type":"message_start","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":1200,"cache_read_input_tokens":300,"cache_creation_input_tokens":40,"output_tokens":1}}}\n\n');
        res.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n');
        if (body.includes("hang")) return; // the agent hangs up before the end
        res.end('event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":77}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n');
        return;
      }
      if (req.url?.startsWith("/v1/messages")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "message", model: "claude-haiku-4-5", usage: { input_tokens: 50, output_tokens: 9 } }));
        return;
      }
      res.writeHead(201, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
});

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await new Promise<void>((r) => upstream.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

const upstreamUrl = (path = "") => `http://127.0.0.1:${(upstream.address() as AddressInfo).port}${path}`;

function call(method: string, path: string, headers: Record<string, string>, body = ""): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const spec = (upstream: string) => ({ upstream, key: "sk-ant-real-key", keyHeader: "x-api-key", baseUrlVariable: "ANTHROPIC_BASE_URL", keyVariable: "ANTHROPIC_API_KEY" });

describe("the model gateway", () => {
  it("forwards a model call with the real key in place of whatever the agent sent, under the upstream's path", async () => {
    gateway = await startModelGateway(socketPath, spec(upstreamUrl("/anthropic/")));
    const answer = await call("POST", "/v1/messages?beta=true", { "x-api-key": "placeholder", authorization: "Bearer stolen", "anthropic-version": "2023-06-01", "content-type": "application/json" }, '{"model":"m"}');
    expect(answer).toMatchObject({ status: 201, body: '{"ok":true}' });
    expect(answer.headers["x-upstream"]).toBe("yes");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/anthropic/v1/messages?beta=true", body: '{"model":"m"}' });
    expect(seen[0]!.headers["x-api-key"]).toBe("sk-ant-real-key");
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[0]!.headers["anthropic-version"]).toBe("2023-06-01");
  });

  it("streams the answer as it comes (server-sent events)", async () => {
    gateway = await startModelGateway(socketPath, spec(upstreamUrl()));
    const answer = await call("POST", "/v1/stream", {}, "{}");
    expect(answer.body).toBe("event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n");
  });

  it("hostile: anything but the model API is refused and never reaches the upstream", async () => {
    gateway = await startModelGateway(socketPath, spec(upstreamUrl()));
    for (const [method, path] of [
      ["GET", "/"],
      ["POST", "/admin"],
      ["GET", "/v1/../secrets"],
      ["DELETE", "/v1/messages"],
      ["GET", "http://169.254.169.254/latest/meta-data/"],
    ] as const) {
      const answer = await call(method, path, {});
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ type: "error", error: { type: "airlock_gateway_error" } });
    }
    expect(seen).toHaveLength(0);
  });

  it("meters each model answer from the model API's own usage: streamed, JSON, and one the agent hung up on", async () => {
    const seenUsage: unknown[] = [];
    gateway = await startModelGateway(socketPath, spec(upstreamUrl()), (u) => seenUsage.push(u));
    await call("POST", "/v1/messages?beta=true", {}, '{"stream":true}');
    await call("POST", "/v1/messages", {}, '{"stream":false}');
    await call("POST", "/v1/messages/count_tokens", {}, "{}");
    // Hang up mid-stream: the input already billed still counts.
    await new Promise<void>((resolve) => {
      const req = request({ socketPath, method: "POST", path: "/v1/messages", headers: { "content-length": "27" } }, (res) => {
        res.once("data", () => {
          req.destroy();
          setTimeout(resolve, 100);
        });
      });
      req.on("error", () => undefined);
      req.end('{"stream":true,"x":"hang"}\n');
    });
    expect(seenUsage).toEqual([
      { model: "claude-sonnet-4-5", inputTokens: 1200, outputTokens: 77, cacheReadTokens: 300, cacheWriteTokens: 40 },
      { model: "claude-haiku-4-5", inputTokens: 50, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { model: "claude-sonnet-4-5", inputTokens: 1200, outputTokens: 1, cacheReadTokens: 300, cacheWriteTokens: 40 },
    ]);
  });

  it("an upstream that does not answer is a 502 in the Messages API's error shape", async () => {
    gateway = await startModelGateway(socketPath, spec("http://127.0.0.1:9"));
    const answer = await call("POST", "/v1/messages", {}, "{}");
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body).error.message).toMatch(/the model API did not answer/);
  });

  it("refuses a base URL that is not http(s)", async () => {
    await expect(startModelGateway(socketPath, spec("file:///etc/passwd"))).rejects.toThrow(/must be http/);
  });
});
