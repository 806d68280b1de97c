import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import type { SessionUser } from "@/server/auth/roles";
import { authenticateApiToken, recordTokenUse } from "@/server/domain/api-tokens/tokens";
import { transcriptExportResponse } from "@/server/domain/runs/export";
import { readBodyLimited } from "@/server/domain/ingest/read-body";
import { getDb, type PrismaClient } from "@/server/db";
import { env } from "@/server/env";
import type { Limiter } from "@/server/http/rate-limit";
import { runEventsResponse, type StreamDeps } from "@/server/streaming/responses";
import { formatError } from "@/server/trpc/error-format";
import { createTRPCContext } from "@/server/trpc/init";
import { createCaller } from "@/server/trpc/root";
import { openApiDocument } from "./openapi";
import { referencePage } from "./reference";
import { matchRoute, type RestRoute } from "./routes";
import { coerceQuery, procedureInput } from "./schemas";

// /api/v1: token in, procedure call, JSON out. An API token (Authorization: Bearer) is the only
// credential: session cookies are ignored here, so a page on another site cannot ride a
// signed-in browser into this API (no CSRF surface), and a token is never a session on the
// console's own /api/trpc. Every request a token makes is audited, refused or not.

export type RestDeps = { db?: PrismaClient; now?: () => Date; mutationLimit?: Limiter; stream?: StreamDeps };

const noStore = { "Cache-Control": "no-store" };

const problem = (status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  Response.json({ error: { code, message, ...extra } }, { status, headers: { ...noStore, ...headers } });

/** JSON with dates as ISO text and big integers as decimal text. */
const json = (value: unknown, status = 200) =>
  new Response(JSON.stringify(value ?? null, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)), {
    status,
    headers: { ...noStore, "Content-Type": "application/json" },
  });

function errorResponse(error: unknown): Response {
  const trpc = error instanceof TRPCError ? error : new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: error });
  const status = getHTTPStatusCodeFromError(trpc);
  if (status >= 500) console.error("[rest] internal error", trpc.cause ?? trpc);
  const shaped = formatError({ shape: { message: trpc.message, code: -32603, data: { code: trpc.code, httpStatus: status } }, error: trpc });
  const { reason, details, fieldErrors } = shaped.data;
  const wait = (details as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
  return problem(status, trpc.code, shaped.message, { reason, details, fieldErrors }, typeof wait === "number" ? { "Retry-After": String(wait) } : {});
}

const bearerOf = (req: Request) => /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "")?.[1] ?? null;

export async function handleRest(req: Request, deps: RestDeps = {}): Promise<Response> {
  const db = deps.db ?? getDb();
  const now = deps.now ?? (() => new Date());
  const url = new URL(req.url);
  const path = url.pathname.replace(/^\/api\/v1/, "") || "/";

  // The document and its reference page are public: they describe, they do not disclose.
  if (req.method === "GET" && path === "/openapi.json") return Response.json(openApiDocument(url.origin), { headers: { "Cache-Control": "public, max-age=60" } });
  if (req.method === "GET" && (path === "/reference" || path === "/")) {
    return new Response(referencePage(openApiDocument(url.origin)), { headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "public, max-age=60" } });
  }

  const match = matchRoute(req.method, path);
  if (!match) return problem(404, "NOT_FOUND", `No such endpoint: ${req.method} /api/v1${path}. The reference is at /api/v1/reference.`);
  if ("allowed" in match) return problem(405, "METHOD_NOT_SUPPORTED", `Use ${match.allowed.join(" or ")} here.`, {}, { Allow: match.allowed.join(", ") });

  const token = bearerOf(req);
  if (!token) {
    return problem(401, "UNAUTHORIZED", "The REST API takes an API token: send `Authorization: Bearer airlock_…` (make one under Settings → API tokens). Session cookies are not accepted here.", {}, { "WWW-Authenticate": 'Bearer realm="airlock"' });
  }
  const auth = await authenticateApiToken({ db, token, now: now() });
  if (!auth.ok) return problem(401, "UNAUTHORIZED", auth.reason, {}, { "WWW-Authenticate": 'Bearer realm="airlock", error="invalid_token"' });

  const response = await answer(req, url, match.route, match.params, auth.user, { ...deps, db, now });
  await recordTokenUse(db, auth.user, { method: req.method, path: url.pathname, status: response.status });
  return response;
}

async function answer(req: Request, url: URL, route: RestRoute, params: Record<string, string>, user: SessionUser, deps: Required<Pick<RestDeps, "db" | "now">> & RestDeps) {
  try {
    if (route.handler) return await custom(req, route.handler, params, user, deps);
    const procedure = route.procedure!;
    let input: Record<string, unknown>;
    if (route.method === "GET") input = coerceQuery(procedureInput(procedure), url.searchParams);
    else {
      const body = await readBodyLimited(req, env.AIRLOCK_TRPC_MAX_BYTES);
      if (!body.ok) return problem(413, "PAYLOAD_TOO_LARGE", `The request body is larger than ${body.limit} bytes.`);
      const text = new TextDecoder().decode(body.bytes);
      let parsed: unknown = {};
      try {
        parsed = text.trim() === "" ? {} : JSON.parse(text);
      } catch {
        return problem(400, "BAD_REQUEST", "The request body is not JSON.");
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return problem(400, "BAD_REQUEST", "The request body must be a JSON object.");
      input = parsed as Record<string, unknown>;
    }
    // Path parameters win over the same names in the body: the URL says which object.
    Object.assign(input, params);
    const caller = createCaller(createTRPCContext({ user, db: deps.db, now: deps.now, mutationLimit: deps.mutationLimit }));
    const [area, name] = procedure.split(".") as [string, string];
    // The caller is a proxy keyed by procedure path; the route table names only real procedures.
    const fn = (caller as unknown as Record<string, Record<string, (input: unknown) => Promise<unknown>>>)[area]![name]!;
    const result = await fn(input);
    return json(result);
  } catch (error) {
    return errorResponse(error);
  }
}

async function custom(req: Request, handler: NonNullable<RestRoute["handler"]>, params: Record<string, string>, user: SessionUser, deps: Required<Pick<RestDeps, "db" | "now">> & RestDeps) {
  const token = user.apiToken!;
  if (handler === "whoami") {
    return json({ user: { id: user.id, name: user.name }, token: { id: token.tokenId, name: token.name, kind: token.kind, role: token.role, repositoryIds: token.repositoryIds } });
  }
  if (handler === "eventStream") return runEventsResponse(req, params.runId!, { ...deps.stream, db: deps.db, user: async () => user });
  return transcriptExportResponse({ db: deps.db, user, runId: params.runId!, format: handler === "transcriptJsonl" ? "jsonl" : "md", download: new URL(req.url).searchParams.get("download") === "1" });
}
