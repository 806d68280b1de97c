import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A TEST DOUBLE of the Anthropic Messages API, owned by the tests: this machine cannot reach a
// model provider, and the product never ships a fake model. It speaks the real protocol that
// Claude Code uses through ANTHROPIC_BASE_URL: POST /v1/messages with `stream: true` answered as
// server-sent events (message_start, content_block_start / _delta / _stop, message_delta,
// message_stop), `stream: false` answered as one JSON message, errors as
// {"type":"error","error":{...}} with the status the API uses. What the model "says" is scripted
// by the test per request; every request is recorded (headers, model, system prompt, tools) so a
// test can check what the CLI offered the model.

export type DoubleBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "tool_use"; name: string; input: Record<string, unknown>; id?: string };

export type DoubleTurn =
  | { blocks: DoubleBlock[]; stopReason?: "end_turn" | "tool_use" | "max_tokens"; usage?: Partial<DoubleUsage> }
  | { error: { status: number; type: string; message: string } };

export type DoubleUsage = { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };

export type RecordedRequest = {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: {
    model?: string;
    stream?: boolean;
    system?: string | { type: string; text?: string }[];
    tools?: { name: string; description?: string; input_schema?: unknown }[];
    messages?: { role: string; content: string | { type: string; text?: string; tool_use_id?: string; content?: unknown }[] }[];
    max_tokens?: number;
  } & Record<string, unknown>;
};

export type MessagesApiDouble = {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
};

/** The system prompt of a request as one string. */
export function systemText(req: RecordedRequest): string {
  const s = req.body.system;
  if (typeof s === "string") return s;
  return (s ?? []).map((b) => b.text ?? "").join("\n");
}

/** The text of the last user message (tool results included), to script a reply on. */
export function lastUserText(req: RecordedRequest): string {
  const last = [...(req.body.messages ?? [])].reverse().find((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content
    .map((b) => (b.type === "text" ? (b.text ?? "") : b.type === "tool_result" ? JSON.stringify(b.content ?? "") : ""))
    .join("\n");
}

export async function startMessagesApiDouble(opts: {
  /** The reply to one request; called for every /v1/messages request in arrival order. */
  respond: (req: RecordedRequest, index: number) => DoubleTurn;
  host?: string;
}): Promise<MessagesApiDouble> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(err) } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method !== "POST" || !path.endsWith("/v1/messages")) {
      // count_tokens and anything else the CLI may probe: answered plainly, not scripted.
      if (path.endsWith("/count_tokens")) return json(res, 200, { input_tokens: 100 });
      return json(res, 404, { type: "error", error: { type: "not_found_error", message: `no route ${req.method} ${path}` } });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as RecordedRequest["body"];
    const recorded: RecordedRequest = { path, headers: req.headers, body };
    requests.push(recorded);
    const turn = opts.respond(recorded, requests.length - 1);
    if ("error" in turn) return json(res, turn.error.status, { type: "error", error: { type: turn.error.type, message: turn.error.message } });
    const usage: DoubleUsage = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...turn.usage };
    const content = turn.blocks.map((b) => (b.type === "tool_use" ? { ...b, id: b.id ?? `toolu_${randomUUID().replaceAll("-", "").slice(0, 24)}` } : b));
    const stopReason = turn.stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    const message = { id: `msg_${randomUUID().replaceAll("-", "").slice(0, 24)}`, type: "message", role: "assistant", model: body.model ?? "unknown", stop_sequence: null };
    if (!body.stream) {
      return json(res, 200, { ...message, content: content.map(finalBlock), stop_reason: stopReason, usage });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "request-id": `req_${randomUUID()}` });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send("message_start", {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    });
    content.forEach((b, index) => {
      if (b.type === "text") {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } });
      } else if (b.type === "thinking") {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: b.thinking } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "double-signature" } });
      } else {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
      }
      send("content_block_stop", { type: "content_block_stop", index });
    });
    send("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    send("message_stop", { type: "message_stop" });
    res.end();
  }

  await new Promise<void>((r) => server.listen(0, opts.host ?? "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const host = opts.host && opts.host !== "0.0.0.0" ? opts.host : "127.0.0.1";
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    requests,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

function finalBlock(b: DoubleBlock & { id?: string }) {
  return b.type === "thinking" ? { ...b, signature: "double-signature" } : b;
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
