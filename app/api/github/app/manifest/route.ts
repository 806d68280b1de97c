import { userFromHeaders } from "@/server/auth/session";
import { getDb } from "@/server/db";
import { completeManifestFlow } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { isAppError } from "@/server/errors";

// GitHub's redirect after a person creates the app from Airlock's manifest: `?code=&state=`.
// The signed-in admin who started the flow completes it; then on to Settings → GitHub.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(request: Request) {
  const url = new URL(request.url);
  const back = (params: Record<string, string>) => Response.redirect(new URL(`/settings/github?${new URLSearchParams(params)}`, env.AIRLOCK_URL ?? url.origin), 303);
  const user = await userFromHeaders(request.headers);
  if (!user) return back({ error: "Sign in as the Airlock admin who started the setup, then start again." });
  const code = url.searchParams.get("code") ?? "";
  const state = url.searchParams.get("state") ?? "";
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(code) || !/^[a-f0-9]{48}$/.test(state)) return back({ error: "GitHub's redirect carried no valid code and state." });
  try {
    await completeManifestFlow({ db: getDb(), actor: user, code, state, key: sealingKey(), apiUrl: env.GITHUB_API_URL ?? null });
    return back({ created: "1" });
  } catch (err) {
    if (isAppError(err) && err.status < 500) return back({ error: err.message });
    throw err;
  }
}
