import { getDb } from "@/server/db";
import { metricsSnapshot, toPrometheus } from "@/server/domain/metrics";
import { env } from "@/server/env";
import { metricsAccess } from "@/server/http/metrics-access";

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
  const snapshot = await metricsSnapshot({ db: getDb(), repositoryIds: "all" });
  return new Response(toPrometheus(snapshot), {
    headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" },
  });
}
