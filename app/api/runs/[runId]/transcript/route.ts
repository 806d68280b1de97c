import { userFromHeaders } from "@/server/auth/session";
import { getDb } from "@/server/db";
import { transcriptExportResponse } from "@/server/domain/runs/export";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// The console's transcript export and raw view (session cookie; a read, so no CSRF concern):
// ?format=jsonl|md, &download=1 for a file. The REST API serves the same with a token.
export async function GET(req: Request, { params }: { params: Promise<{ runId: string }> }) {
  const user = await userFromHeaders(req.headers);
  if (!user) return Response.json({ error: { message: "Sign in to continue." } }, { status: 401 });
  const url = new URL(req.url);
  const format = url.searchParams.get("format") === "md" ? "md" : "jsonl";
  const download = url.searchParams.get("download") === "1";
  return transcriptExportResponse({ db: getDb(), user, runId: (await params).runId, format, download, rawAsText: !download });
}
