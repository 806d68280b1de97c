import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { userFromHeaders } from "@/server/auth/session";
import { checkSameOriginMutation } from "@/server/http/same-origin";
import { appRouter } from "@/server/trpc/root";
import { createTRPCContext } from "@/server/trpc/init";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

function handler(req: Request) {
  if (req.method === "POST") {
    const verdict = checkSameOriginMutation(req);
    if (!verdict.ok) {
      return Response.json({ error: { message: verdict.reason, code: "FORBIDDEN" } }, { status: 403 });
    }
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () => createTRPCContext({ user: await userFromHeaders(req.headers) }),
  });
}

export { handler as GET, handler as POST };
