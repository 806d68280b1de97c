import { timingSafeEqual } from "node:crypto";
import { getDb } from "@/server/db";
import { metricsSnapshot, toPrometheus } from "@/server/domain/metrics";
import { env } from "@/server/env";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

function authorised(req: Request): boolean {
  if (!env.AIRLOCK_METRICS_TOKEN) return true;
  const given = Buffer.from(req.headers.get("authorization")?.replace(/^Bearer /i, "") ?? "");
  const want = Buffer.from(env.AIRLOCK_METRICS_TOKEN);
  return given.length === want.length && timingSafeEqual(given, want);
}

export async function GET(req: Request) {
  if (!authorised(req)) return new Response("unauthorised\n", { status: 401 });
  const snapshot = await metricsSnapshot({ db: getDb(), repositoryIds: "all" });
  return new Response(toPrometheus(snapshot), {
    headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" },
  });
}
