import { repositoryRole, roleAtLeast, visibleRepositoryIds, type SessionUser } from "@/server/auth/roles";
import { userFromHeaders } from "@/server/auth/session";
import { getDb, type Db } from "@/server/db";
import { env, requireDatabaseUrl } from "@/server/env";
import { getRunEventHub, type RunEventHub } from "./run-event-hub";
import { createRunEventStream } from "./run-event-stream";
import { parseLastEventId, sseComment, sseHeaders, sseRetry } from "./sse";
import { logEvent } from "@/server/observability/log";

// The three SSE endpoints, as functions of a Request (served by server/web/streams.ts):
// permission checks happen here, before a stream opens, so a refused client gets a plain
// 401/403/404, and a full server or account a 503/429.

export type StreamDeps = {
  db?: Db;
  hub?: RunEventHub;
  /** Resolves the session user; tests may pass their own. */
  user?: (req: Request) => Promise<SessionUser | null>;
  heartbeatMs?: number;
  /** Backlog page size (tests use small pages). */
  page?: { limit: number; maxBytes: number };
  /** Streams one account may hold open (default AIRLOCK_MAX_STREAMS_PER_USER). */
  maxStreamsPerUser?: number;
};

// Open streams in this process, in all and per account. A slot is taken before a stream opens
// and given back once when it ends: past the process cap new streams get 503, past an
// account's cap 429 (one account, or one leaked session, cannot take every slot). Both say
// when to retry; the run page's client retries with backoff.
const maxOpenStreams = 5_000;
let openStreams = 0;
const openByUser = new Map<string, number>();

export function openStreamCount(userId?: string) {
  return userId === undefined ? openStreams : (openByUser.get(userId) ?? 0);
}

function takeSlot(userId: string, perUser: number): { release: () => void } | Response {
  if (openStreams >= maxOpenStreams) return problem(503, "Too many open streams on this server; retry shortly.", { "Retry-After": "5" });
  const mine = openByUser.get(userId) ?? 0;
  if (mine >= perUser) return problem(429, `You have ${mine} live views open, the most one account may have; close some, or retry shortly.`, { "Retry-After": "10" });
  openStreams++;
  openByUser.set(userId, mine + 1);
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      openStreams--;
      const left = (openByUser.get(userId) ?? 1) - 1;
      if (left > 0) openByUser.set(userId, left);
      else openByUser.delete(userId);
    },
  };
}

export function defaultHub(): RunEventHub {
  return getRunEventHub(() => ({
    connectionString: requireDatabaseUrl(),
    db: getDb(),
    log: (line) => logEvent("process", {}, { source: "sse" }, line, "warn"),
  }));
}

const problem = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { message } }, { status, headers: { "Cache-Control": "no-store", ...headers } });

/** The answer to a client that left before it could be given (nobody reads it). */
const gone = () => new Response(null, { status: 499, headers: { "Cache-Control": "no-store" } });

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
  // The client may have gone during the checks: take no slot for nobody.
  if (req.signal.aborted) return gone();
  const slot = takeSlot(user.id, deps.maxStreamsPerUser ?? env.AIRLOCK_MAX_STREAMS_PER_USER);
  if (slot instanceof Response) return slot;
  try {
    const stream = createRunEventStream({
      hub: deps.hub ?? defaultHub(),
      db,
      runId,
      afterSeq: last.seq,
      signal: req.signal,
      heartbeatMs: deps.heartbeatMs,
      page: deps.page,
      onClose: slot.release,
    });
    return new Response(stream, { headers: sseHeaders });
  } catch (err) {
    slot.release();
    throw err;
  }
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
  const visible = await visibleRepositoryIds(db, user);
  // The client may have gone during the checks: take no slot for nobody.
  if (req.signal.aborted) return gone();
  const slot = takeSlot(user.id, deps.maxStreamsPerUser ?? env.AIRLOCK_MAX_STREAMS_PER_USER);
  if (slot instanceof Response) return slot;
  let sub: FeedSubscription;
  try {
    sub = subscribe(deps.hub ?? defaultHub(), visible);
  } catch (err) {
    slot.release();
    throw err;
  }
  const encoder = new TextEncoder();
  let heartbeat: NodeJS.Timeout | null = null;
  let done = false;
  let ctrl: ReadableStreamDefaultController<Uint8Array> | null = null;
  // Every way a stream ends comes here once: the client goes (abort, cancel), the feed closes,
  // or reading it fails. The slot is given back on each of them.
  const cleanup = () => {
    if (done) return;
    done = true;
    req.signal.removeEventListener("abort", onAbort);
    slot.release();
    if (heartbeat) clearInterval(heartbeat);
    sub.close("client gone");
  };
  const onAbort = () => {
    cleanup();
    try {
      ctrl?.close();
    } catch {
      // already closed or errored
    }
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        ctrl = controller;
        // An abort that fired before this point never reaches a listener added now.
        if (req.signal.aborted) return onAbort();
        req.signal.addEventListener("abort", onAbort);
        controller.enqueue(encoder.encode(sseRetry(3_000) + sseComment("connected")));
        heartbeat = setInterval(() => {
          if (!done && (controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(sseComment("keepalive")));
        }, deps.heartbeatMs ?? 15_000);
        heartbeat.unref();
      },
      async pull(controller) {
        try {
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
        } catch (err) {
          if (done) return;
          cleanup();
          controller.error(err);
        }
      },
      cancel: cleanup,
    },
    { highWaterMark: 1 },
  );
  return new Response(stream, { headers: sseHeaders });
}
