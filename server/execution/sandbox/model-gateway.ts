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

export async function startModelGateway(socketPath: string, spec: ModelGatewaySpec): Promise<ModelGateway> {
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
