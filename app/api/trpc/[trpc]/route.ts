import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { userFromHeaders } from "@/server/auth/session";
import { readBodyLimited } from "@/server/domain/ingest/read-body";
import { getDb } from "@/server/db";
import { env, rateLimitsOn } from "@/server/env";
import { CLIENT_IP_HEADER } from "@/server/web/client-ip";
import { createMutationLimiter, type Limiter } from "@/server/http/rate-limit";
import { checkSameOriginMutation } from "@/server/http/same-origin";
import { appRouter } from "@/server/trpc/root";
import { createTRPCContext } from "@/server/trpc/init";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Procedures one batched request may call (a page batches a handful). */
const MAX_BATCH = 50;

// One limiter per process; its counts live in PostgreSQL, shared by every process.
const globalForLimits = globalThis as unknown as { airlockMutationLimit?: Limiter };
const mutationLimit = () => (globalForLimits.airlockMutationLimit ??= createMutationLimiter(getDb(), env.AIRLOCK_MUTATION_RATE_LIMIT));

const refuse = (status: number, code: string, message: string) => Response.json({ error: { message, code } }, { status, headers: { "Cache-Control": "no-store" } });

async function handler(req: Request) {
  const path = new URL(req.url).pathname.replace(/^\/api\/trpc\/?/, "");
  if (path.split(",").length > MAX_BATCH) return refuse(400, "BAD_REQUEST", `A batch may call at most ${MAX_BATCH} procedures.`);
  let request = req;
  if (req.method === "POST") {
    const verdict = checkSameOriginMutation(req);
    if (!verdict.ok) return refuse(403, "FORBIDDEN", verdict.reason);
    // Never read a body past the limit: a mutation's input is bounded before it is parsed.
    const body = await readBodyLimited(req, env.AIRLOCK_TRPC_MAX_BYTES);
    if (!body.ok) return refuse(413, "PAYLOAD_TOO_LARGE", `The request body is larger than ${body.limit} bytes (AIRLOCK_TRPC_MAX_BYTES).`);
    request = new Request(req.url, { method: "POST", headers: req.headers, body: body.bytes as BodyInit, signal: req.signal });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: async () =>
      createTRPCContext({
        user: await userFromHeaders(req.headers),
        mutationLimit: rateLimitsOn(env) ? mutationLimit() : undefined,
        clientIp: req.headers.get(CLIENT_IP_HEADER),
      }),
    // A limited caller is told when to come back.
    responseMeta: ({ errors }) => {
      const limited = errors.find((e) => e.code === "TOO_MANY_REQUESTS");
      const wait = (limited?.cause as { details?: { retryAfterSeconds?: unknown } } | undefined)?.details?.retryAfterSeconds;
      return typeof wait === "number" ? { headers: new Headers({ "Retry-After": String(wait) }) } : {};
    },
  });
}

export { handler as GET, handler as POST };
