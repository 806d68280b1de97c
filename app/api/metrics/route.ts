import { metricsAccess } from "@/server/http/metrics-access";
import { env } from "@/server/env";
import { registerDbGauges } from "@/server/observability/db-gauges";
import { initProcessMetrics } from "@/server/observability/metrics";

// This web process's Prometheus registry (server/observability/metrics.ts says why per process).
export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export async function GET(req: Request) {
  const access = metricsAccess({ token: env.AIRLOCK_METRICS_TOKEN, nodeEnv: env.NODE_ENV, authorization: req.headers.get("authorization") });
  if (!access.ok) {
    return Response.json(
      { error: { message: access.message } },
      { status: access.status, headers: { "Cache-Control": "no-store", ...(access.status === 401 ? { "WWW-Authenticate": 'Bearer realm="airlock-metrics"' } : {}) } },
    );
  }
  const registry = initProcessMetrics({ dbGauges: registerDbGauges });
  return new Response(await registry.metrics(), { headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" } });
}
