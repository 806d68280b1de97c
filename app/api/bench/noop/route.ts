import { env } from "@/server/env";

// The baseline `npm run bench -- webhooks` measures the webhook route against: a route handler
// that does nothing but answer. Off unless AIRLOCK_BENCH=1.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function POST() {
  if (!env.AIRLOCK_BENCH) return new Response("Not Found", { status: 404 });
  return new Response("ok", { status: 200 });
}
