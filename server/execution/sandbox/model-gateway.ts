import { chmod, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";

// The model API's key never enters the sandbox. Inside, the agent's CLI talks plain HTTP to a
// forwarder (socat, 127.0.0.1:3129) that reaches this gateway through a Unix socket bound into
// the sandbox; the gateway adds the credential headers and forwards to the one upstream the
// stack's grants name. The agent holds only a placeholder key: an `env`, a `cat /proc/*/environ`
// or a prompt-injected "print your key" finds nothing worth taking. It forwards only the model
// API's paths (/v1/...) and nothing else: it is not a way out for anything but model calls.

export type ModelGatewaySpec = {
  /** The model API's base URL (https://api.anthropic.com, or a gateway a grant names). */
  upstream: string;
  /** The key, and the header it goes in on every forwarded request (replacing what the agent sent). */
  key: string;
  keyHeader: string;
  /** The variables the agent's CLI reads for the base URL and the key. */
  baseUrlVariable: string;
  keyVariable: string;
};

export type ModelGateway = { close(): Promise<void> };

/** One model response's usage as the model API reported it to the gateway (not the agent's word). */
export type GatewayUsage = { model: string | null; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };

const maxMeteredJsonBytes = 16 * 1024 * 1024;
const maxSseLineBytes = 1024 * 1024;

type ApiUsage = { input_tokens?: unknown; output_tokens?: unknown; cache_read_input_tokens?: unknown; cache_creation_input_tokens?: unknown };
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/**
 * Reads the usage out of a Messages API answer as it passes: a streamed one (message_start
 * carries the model and input usage, each message_delta the output so far) or a JSON one.
 * Calls done() once, at the end, with what it saw (or nothing when the answer carried no usage).
 */
function usageReader(streamed: boolean, done: (u: GatewayUsage) => void) {
  let model: string | null = null;
  const u = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let seen = false;
  const take = (usage: ApiUsage | undefined, withInput: boolean) => {
    if (!usage || typeof usage !== "object") return;
    seen = true;
    if (withInput || usage.input_tokens !== undefined) u.inputTokens = Math.max(u.inputTokens, count(usage.input_tokens));
    if (withInput || usage.cache_read_input_tokens !== undefined) u.cacheReadTokens = Math.max(u.cacheReadTokens, count(usage.cache_read_input_tokens));
    if (withInput || usage.cache_creation_input_tokens !== undefined) u.cacheWriteTokens = Math.max(u.cacheWriteTokens, count(usage.cache_creation_input_tokens));
    // Output usage in a delta is cumulative for the message.
    u.outputTokens = Math.max(u.outputTokens, count(usage.output_tokens));
  };
  let buffer = "";
  let overflow = false;
  const onJson = (text: string) => {
    try {
      const o = JSON.parse(text) as { type?: string; model?: unknown; usage?: ApiUsage; message?: { model?: unknown; usage?: ApiUsage } };
      if (o.type === "message_start") {
        if (typeof o.message?.model === "string") model = o.message.model.slice(0, 200);
        take(o.message?.usage, true);
      } else if (o.type === "message_delta") take(o.usage, false);
      else if (!streamed && o.type === "message") {
        if (typeof o.model === "string") model = o.model.slice(0, 200);
        take(o.usage, true);
      }
    } catch {
      /* not JSON: not a usage report */
    }
  };
  return {
    push(chunk: Buffer) {
      if (overflow) return;
      buffer += chunk.toString("utf8");
      if (!streamed) {
        if (buffer.length > maxMeteredJsonBytes) overflow = true;
        return;
      }
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (line.startsWith("data:")) onJson(line.slice(5).trim());
      }
      if (buffer.length > maxSseLineBytes) buffer = "";
    },
    end() {
      if (!streamed && !overflow) onJson(buffer);
      if (seen) done({ model, ...u });
    },
  };
}

/** What the agent holds instead of the key. */
export const placeholderKey = "airlock-model-gateway-holds-the-key";

const maxBodyBytes = 32 * 1024 * 1024;
// Hop-by-hop headers (RFC 9110 §7.6.1) and what the gateway sets itself.
const dropped = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host"]);
const credentialHeaders = new Set(["x-api-key", "authorization"]);

function forwardedHeaders(incoming: IncomingHttpHeaders, spec: ModelGatewaySpec): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || dropped.has(name) || credentialHeaders.has(name)) continue;
    out[name] = value;
  }
  out[spec.keyHeader.toLowerCase()] = spec.key;
  return out;
}

function refuse(res: ServerResponse, status: number, message: string) {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { "content-type": "application/json" });
  // The Messages API's error shape, so the CLI shows the reason.
  res.end(JSON.stringify({ type: "error", error: { type: "airlock_gateway_error", message } }));
}

/**
 * `onUsage`: each model answer's usage as the model API sent it, for Airlock's meter: the agent
 * cannot under-report what passes here.
 */
export async function startModelGateway(socketPath: string, spec: ModelGatewaySpec, onUsage?: (u: GatewayUsage) => void): Promise<ModelGateway> {
  const upstream = new URL(spec.upstream);
  if (upstream.protocol !== "https:" && upstream.protocol !== "http:") throw new Error(`the model API base URL must be http(s): ${upstream.protocol}`);
  const prefix = upstream.pathname.replace(/\/+$/, "");
  const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    // Origin-form only (an absolute URI would be a proxy request), and only the model API.
    if (!path.startsWith("/v1/") || path.includes("..") || (req.method !== "POST" && req.method !== "GET")) {
      req.resume();
      return refuse(res, 403, `Airlock's model gateway forwards only the model API (${req.method} /v1/...), not ${req.method} ${path.slice(0, 100)}`);
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > maxBodyBytes) {
      req.resume();
      return refuse(res, 413, `request body over ${maxBodyBytes} bytes`);
    }
    const out = send(
      { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port || undefined, method: req.method, path: `${prefix}${path}`, headers: forwardedHeaders(req.headers, spec) },
      (answer) => {
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !dropped.has(name)) headers[name] = value;
        res.writeHead(answer.statusCode ?? 502, headers);
        if (onUsage && req.method === "POST" && /^\/v1\/messages(\?|$)/.test(path)) {
          const reader = usageReader(String(answer.headers["content-type"] ?? "").includes("text/event-stream"), onUsage);
          answer.on("data", (chunk: Buffer) => reader.push(chunk));
          // Once, also when the agent hangs up mid-answer: what was billed so far still counts.
          let reported = false;
          const report = () => {
            if (reported) return;
            reported = true;
            reader.end();
          };
          answer.on("end", report);
          answer.on("close", report);
        }
        answer.pipe(res);
        answer.on("error", () => res.destroy());
      },
    );
    out.on("error", (err) => refuse(res, 502, `the model API did not answer: ${err.message}`));
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        out.destroy();
        refuse(res, 413, `request body over ${maxBodyBytes} bytes`);
        req.destroy();
      }
    });
    req.pipe(out);
    // The agent hung up (cancel, a killed CLI): stop the model call too.
    res.on("close", () => {
      if (!res.writableFinished) out.destroy();
    });
  });
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  // The sandbox's uid is not the worker's: it must be able to connect.
  await chmod(socketPath, 0o666);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
