import { getDb } from "@/server/db";
import { env, rateLimitsOn } from "@/server/env";
import { createMutationLimiter, type Limiter } from "@/server/http/rate-limit";
import { handleRest } from "@/server/rest/handler";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// The REST API: wiring only (server/rest). Token-authenticated; mutations share the console's
// per-account limit (the same PostgreSQL counters).
const globalForLimits = globalThis as unknown as { airlockMutationLimit?: Limiter };
const mutationLimit = () => (globalForLimits.airlockMutationLimit ??= createMutationLimiter(getDb(), env.AIRLOCK_MUTATION_RATE_LIMIT));

const handler = (req: Request) => handleRest(req, { mutationLimit: rateLimitsOn(env) ? mutationLimit() : undefined });

export { handler as GET, handler as POST, handler as PUT };
