import { runStatusResponse } from "@/server/streaming/responses";

// Server-sent status changes for the runs list.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return runStatusResponse(req);
}
