import { runEventsResponse } from "@/server/streaming/responses";

// Server-sent events of one run: backlog, then live; resumable with Last-Event-ID.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(req: Request, ctx: { params: Promise<{ runId: string }> }) {
  const { runId } = await ctx.params;
  return runEventsResponse(req, runId);
}
