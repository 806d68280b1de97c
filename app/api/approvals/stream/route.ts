import { approvalsResponse } from "@/server/streaming/responses";

// Server-sent changes to approval requests for the /approvals queue.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return approvalsResponse(req);
}
