import { repositoryRole, roleAtLeast, visibleRepositoryIds, type SessionUser } from "@/server/auth/roles";
import { userFromHeaders } from "@/server/auth/session";
import { getDb, type Db } from "@/server/db";
import { env, requireDatabaseUrl } from "@/server/env";
import { getRunEventHub, type RunEventHub } from "./run-event-hub";
import { createRunEventStream } from "./run-event-stream";
import { parseLastEventId, sseComment, sseHeaders, sseRetry } from "./sse";

// The two SSE endpoints, as functions of a Request: permission checks happen
// here, before a stream opens, so a refused client gets a plain 401/403/404.

export type StreamDeps = {
  db?: Db;
  hub?: RunEventHub;
  /** Resolves the session user; tests may pass their own. */
  user?: (req: Request) => Promise<SessionUser | null>;
  heartbeatMs?: number;
  /** Backlog page size (tests use small pages). */
  page?: { limit: number; maxBytes: number };
};

/** Open streams in this process; past the cap new ones get 503 and retry later. */
const maxOpenStreams = 5_000;
let openStreams = 0;

export function openStreamCount() {
  return openStreams;
}

export function defaultHub(): RunEventHub {
  return getRunEventHub(() => ({
    connectionString: requireDatabaseUrl(),
    db: getDb(),
    log: (line) => {
      if (env.AIRLOCK_LOG_LEVEL !== "error") console.warn(`[sse] ${line}`);
    },
  }));
}

const problem = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { message } }, { status, headers: { "Cache-Control": "no-store", ...headers } });

function tooMany(): Response | null {
  if (openStreams < maxOpenStreams) return null;
  return problem(503, "Too many open streams on this server; retry shortly.", { "Retry-After": "5" });
}

/** GET /api/runs/<id>/events */
export async function runEventsResponse(req: Request, runId: string, deps: StreamDeps = {}): Promise<Response> {
  const db = deps.db ?? getDb();
  const user = await (deps.user ?? ((r) => userFromHeaders(r.headers)))(req);
  if (!user) return problem(401, "Sign in to continue.");
  const run = await db.agentDispatchRun.findUnique({ where: { id: runId }, select: { repositoryId: true } });
  if (!run) return problem(404, "No such run.");
  const role = await repositoryRole(db, user, run.repositoryId);
  if (!roleAtLeast(role, "viewer")) return problem(403, "You have no role on this run's repository.");
  const last = parseLastEventId(req);
  if (!last.ok) return problem(400, last.reason);
  const busy = tooMany();
  if (busy) return busy;

  openStreams++;
  const stream = createRunEventStream({
    hub: deps.hub ?? defaultHub(),
    db,
    runId,
    afterSeq: last.seq,
    signal: req.signal,
    heartbeatMs: deps.heartbeatMs,
    page: deps.page,
    onClose: () => openStreams--,
  });
  return new Response(stream, { headers: sseHeaders });
}

/** GET /api/runs/stream: status changes of the runs the user can see. */
export function runStatusResponse(req: Request, deps: StreamDeps = {}): Promise<Response> {
  return feedResponse(req, deps, (hub, visible) => hub.subscribeStatus(visible));
}

/** GET /api/approvals/stream: new and changed approval requests on the repositories the user can see. */
export function approvalsResponse(req: Request, deps: StreamDeps = {}): Promise<Response> {
  return feedResponse(req, deps, (hub, visible) => hub.subscribeApprovals(visible));
}

type FeedSubscription = { take(): { bytes: Uint8Array }[]; wait(): Promise<void>; close(reason: string): void; readonly closed: boolean };

async function feedResponse(req: Request, deps: StreamDeps, subscribe: (hub: RunEventHub, visible: string[] | "all") => FeedSubscription): Promise<Response> {
  const db = deps.db ?? getDb();
  const user = await (deps.user ?? ((r) => userFromHeaders(r.headers)))(req);
  if (!user) return problem(401, "Sign in to continue.");
  const busy = tooMany();
  if (busy) return busy;
  const visible = await visibleRepositoryIds(db, user);
  const sub = subscribe(deps.hub ?? defaultHub(), visible);
  const encoder = new TextEncoder();
  let heartbeat: NodeJS.Timeout | null = null;
  let done = false;
  openStreams++;
  const cleanup = () => {
    if (done) return;
    done = true;
    openStreams--;
    if (heartbeat) clearInterval(heartbeat);
    sub.close("client gone");
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.signal.addEventListener("abort", () => {
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
        controller.enqueue(encoder.encode(sseRetry(3_000) + sseComment("connected")));
        heartbeat = setInterval(() => {
          if (!done && (controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(sseComment("keepalive")));
        }, deps.heartbeatMs ?? 15_000);
        heartbeat.unref();
      },
      async pull(controller) {
        while (!done) {
          const frames = sub.take();
          if (frames.length > 0) {
            controller.enqueue(Buffer.concat(frames.map((f) => f.bytes)));
            return;
          }
          if (sub.closed) {
            cleanup();
            controller.close();
            return;
          }
          await sub.wait();
        }
      },
      cancel: cleanup,
    },
    { highWaterMark: 1 },
  );
  return new Response(stream, { headers: sseHeaders });
}
