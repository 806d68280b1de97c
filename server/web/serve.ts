// The web server: Next.js (pages, tRPC, webhooks, auth) behind a plain node:http server that
// serves the SSE endpoints itself (server/web/streams.ts). `npm start`, the e2e servers and the
// benchmarks run this, so what is measured and tested is what runs.
//   node --import tsx server/web/serve.ts [--dev] [-H host] [-p port]
import { createServer } from "node:http";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import next from "next";
import { clientAddress, CLIENT_IP_HEADER } from "./client-ip";
import { serveStream } from "./streams";
import { env } from "../env";
import { logError, logEvent } from "../observability/log";
import { initProcessMetrics } from "../observability/metrics";
import { registerDbGauges } from "../observability/db-gauges";
import { startTracing } from "../observability/tracing";

// Before Next loads: the process's registry (default metrics from the start) and tracer.
initProcessMetrics({ dbGauges: registerDbGauges });
const tracing = startTracing("airlock-web", env.OTEL_EXPORTER_OTLP_ENDPOINT);

const { values } = parseArgs({
  options: { dev: { type: "boolean", default: false }, hostname: { type: "string", short: "H" }, port: { type: "string", short: "p" } },
});
const hostname = values.hostname ?? process.env.HOST ?? "127.0.0.1";
const port = Number(values.port ?? process.env.PORT ?? 3000);
const dir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const app = next({ dev: values.dev, dir, hostname, port });
const handle = app.getRequestHandler();
await app.prepare();

const origin = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
const streamFailed = (err: unknown) => logError("sse stream", err);
const server = createServer((req, res) => {
  // The one client address rate limits trust: set here, over anything the client sent.
  req.headers[CLIENT_IP_HEADER] = clientAddress(req);
  if (serveStream(req, res, origin, streamFailed)) return;
  void handle(req, res);
});
server.listen(port, hostname, () => logEvent("process", {}, { process: "web", origin }, `ready on ${origin}${values.dev ? " (dev)" : ""}`));

// SIGTERM (the supervisor, Playwright, Ctrl-C): stop taking connections, end open streams, exit.
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.once(sig, () => {
    server.close(() => void (tracing?.shutdown() ?? Promise.resolve()).finally(() => process.exit(0)));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 5_000).unref();
  });
}
