import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { metricsAccess } from "@/server/http/metrics-access";
import { initProcessMetrics } from "./metrics";

// A worker's own scrape endpoint: GET /metrics on loopback, with the same token rule as the web
// endpoint (AIRLOCK_METRICS_TOKEN; required in production). A node exporter or a sidecar
// Prometheus agent on the host scrapes it; it is never exposed beyond the host.

export async function serveWorkerMetrics(opts: { port: number; token: string | undefined; nodeEnv: string }): Promise<{ server: Server; port: number }> {
  const registry = initProcessMetrics();
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found: GET /metrics\n");
      return;
    }
    const access = metricsAccess({ token: opts.token, nodeEnv: opts.nodeEnv, authorization: req.headers.authorization ?? null });
    if (!access.ok) {
      res.writeHead(access.status, { "Content-Type": "application/json", ...(access.status === 401 ? { "WWW-Authenticate": 'Bearer realm="airlock-metrics"' } : {}) });
      res.end(JSON.stringify({ error: { message: access.message } }));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "Content-Type": registry.contentType, "Cache-Control": "no-store" }).end(text),
      (err: Error) => res.writeHead(500, { "Content-Type": "text/plain" }).end(`metrics failed: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
