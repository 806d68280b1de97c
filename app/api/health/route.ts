import { checkHealth } from "@/server/domain/health";
import { env } from "@/server/env";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export async function GET() {
  const health = await checkHealth(env.DATABASE_URL);
  return Response.json(health, {
    status: health.database.reachable ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
