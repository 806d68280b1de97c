import { env } from "@/server/env";

// The baseline `npm run bench -- webhooks` measures the webhook route against: a route handler
// that does nothing but answer (with `x-bench-read-body: 1`, it reads the body first, the one
// thing every webhook handler must do). Off unless AIRLOCK_BENCH=1.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  if (!env.AIRLOCK_BENCH) return new Response("Not Found", { status: 404 });
  if (request.headers.get("x-bench-read-body") === "1") await request.arrayBuffer();
  return new Response("ok", { status: 200 });
}
