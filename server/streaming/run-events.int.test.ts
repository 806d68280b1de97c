import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAuth } from "@/server/auth";
import type { SessionUser } from "@/server/auth/roles";
import { appendRunEvents } from "@/server/domain/events/append";
import type { RunEventInput } from "@/server/domain/events/catalogue";
import { env } from "@/server/env";
import { createRepository, createRun, createUser, TEST_PASSWORD } from "@/server/testing/factories";
import { testDb } from "@/server/testing/db";
import { streamHandler } from "@/server/web/streams";
import { readEventsAfter, resumeEvents } from "./event-rows";
import { defaultHub, openStreamCount, runEventsResponse } from "./responses";
import { RunEventHub } from "./run-event-hub";
import { SseParser, type SseEvent } from "./sse-parser";

// The run event stream against a real PostgreSQL: resume without gap or
// repeat, events from another process, cleanup, and the slow-client bound.

const db = testDb();
const log = (n: number, prefix = "line"): RunEventInput[] =>
  Array.from({ length: n }, (_, i) => ({ type: "log", payload: { stream: "stdout", text: `${prefix} ${i}` } }));

async function appendMany(runId: string, count: number, batch = 100) {
  for (let done = 0; done < count; done += batch) {
    await appendRunEvents({ db, runId, events: log(Math.min(batch, count - done), `e${done}`) });
  }
}

async function finishRun(runId: string) {
  await db.agentDispatchRun.update({ where: { id: runId }, data: { status: "succeeded" } });
  await appendRunEvents({ db, runId, events: [{ type: "status", payload: { scope: "run", from: "running", to: "succeeded", reason: "done" } }] });
}

/** A GET through the web server's stream routing, as a browser's request would go. */
const routed = (req: Request) => streamHandler("GET", new URL(req.url).pathname)!(req);

async function cookieFor(user: SessionUser) {
  const res = await getAuth().api.signInEmail({ body: { email: user.email, password: TEST_PASSWORD }, asResponse: true });
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
}

/** Reads SSE from a response body on demand, keeping what it has parsed. */
class StreamReader {
  readonly events: SseEvent[] = [];
  done = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly parser = new SseParser();
  private readonly decoder = new TextDecoder();
  constructor(body: ReadableStream<Uint8Array> | null) {
    if (!body) throw new Error("no body");
    this.reader = body.getReader();
  }
  get ids() {
    return this.events.filter((e) => e.event !== "end").map((e) => Number(e.id));
  }
  get parserComments() {
    return this.parser.comments;
  }
  // A read that outlived a timeout is kept for the next call, so no chunk is lost.
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  async until(pred: (r: StreamReader) => boolean, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this) && !this.done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out with ${this.events.length} events (last ${this.ids.at(-1)})`);
      this.pending ??= this.reader.read();
      const next = await Promise.race([this.pending, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), left))]);
      if (next === "timeout") continue;
      this.pending = null;
      if (next.done) this.done = true;
      else this.events.push(...this.parser.push(this.decoder.decode(next.value, { stream: true })));
    }
    return this;
  }
  /** Reads whatever arrives within `ms`. */
  async drain(ms: number) {
    await this.until(() => false, ms).catch(() => this);
    return this;
  }
  toEnd(timeoutMs?: number) {
    return this.until((r) => r.done, timeoutMs);
  }
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

let viewer: SessionUser;
let stranger: SessionUser;
let repoId: string;
let cookie: string;

beforeAll(async () => {
  viewer = await createUser();
  stranger = await createUser();
  repoId = (await createRepository({ members: [[viewer, "viewer"]] })).id;
  cookie = await cookieFor(viewer);
});

afterAll(async () => {
  await defaultHub().stop();
});

function get(runId: string, headers: Record<string, string> = {}, query = "", signal?: AbortSignal) {
  const req = new Request(`http://localhost:3000/api/runs/${runId}/events${query}`, { headers: { cookie, ...headers }, signal });
  return routed(req);
}

describe("GET /api/runs/<id>/events: permission and headers", () => {
  it("answers 401, 404, 403 and 400 before any stream opens, and SSE headers when allowed", async () => {
    const run = await createRun({ repositoryId: repoId, status: "succeeded" });
    const anonymous = await routed(new Request(`http://localhost:3000/api/runs/${run.id}/events`));
    expect(anonymous.status).toBe(401);
    expect((await get("no-such-run")).status).toBe(404);
    const other = await cookieFor(stranger);
    expect((await get(run.id, { cookie: other })).status).toBe(403);
    expect((await get(run.id, { "last-event-id": "x" })).status).toBe(400);

    const ok = await get(run.id);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(ok.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(ok.headers.get("x-accel-buffering")).toBe("no");
    // A terminal run with no events: the stream says so and ends.
    const r = await new StreamReader(ok.body).toEnd();
    expect(r.events.map((e) => e.event)).toEqual(["end"]);
  });
});

describe("resume", () => {
  let runId: string;
  beforeAll(async () => {
    runId = (await createRun({ repositoryId: repoId, status: "running" })).id;
    await appendMany(runId, 999);
    await finishRun(runId);
  });

  it("returns exactly the remaining events for every Last-Event-ID of a 1,000-event run", async () => {
    for (let last = 0; last <= 1000; last++) {
      const seqs: number[] = [];
      for await (const page of resumeEvents({ db, runId, afterSeq: last, limit: 400 })) seqs.push(...page.map((e) => e.seq));
      expect(seqs, `after ${last}`).toEqual(range(last + 1, 1000));
    }
  }, 120_000);

  it("skips a purged range instead of stopping at it", async () => {
    const run = await createRun({ repositoryId: repoId, status: "running" });
    await appendMany(run.id, 30);
    await db.runEvent.deleteMany({ where: { runId: run.id, seq: { gte: 5, lte: 20 } } });
    const seqs: number[] = [];
    for await (const page of resumeEvents({ db, runId: run.id, afterSeq: 2, limit: 4 })) seqs.push(...page.map((e) => e.seq));
    expect(seqs).toEqual([3, 4, ...range(21, 30)]);
  });

  it("cuts pages by bytes but always moves forward, even past an event bigger than the budget", async () => {
    const seqs: number[] = [];
    let pages = 0;
    for await (const page of resumeEvents({ db, runId, afterSeq: 0, limit: 1000, maxBytes: 2_000 })) {
      pages++;
      seqs.push(...page.map((e) => e.seq));
    }
    expect(seqs).toEqual(range(1, 1000));
    expect(pages).toBeGreaterThan(10);
    expect((await readEventsAfter({ db, runId, afterSeq: 0, maxBytes: 1 })).map((e) => e.seq)).toEqual([1]);
  });

  it("streams the same remainder through the route, as header or query, then ends", async () => {
    const sample = [0, 1, 2, 250, 499, 500, 501, 998, 999, 1000, ...Array.from({ length: 5 }, () => Math.floor(Math.random() * 1000))];
    for (const [i, last] of sample.entries()) {
      const res = i % 2 === 0 ? await get(runId, { "last-event-id": String(last) }) : await get(runId, {}, `?lastEventId=${last}`);
      const r = await new StreamReader(res.body).toEnd(20_000);
      expect(r.ids, `after ${last}`).toEqual(range(last + 1, 1000));
      expect(r.events.at(-1)?.event).toBe("end");
      const frames = r.events.filter((e) => e.event !== "end");
      if (frames[0]) expect(JSON.parse(frames[0].data)).toMatchObject({ seq: last + 1, type: last + 1 === 1000 ? "status" : "log" });
    }
  }, 60_000);
});

describe("live delivery", () => {
  it("delivers events appended by another process, in order, then ends when the run does", async () => {
    const run = await createRun({ repositoryId: repoId, status: "running" });
    await appendMany(run.id, 5);
    const res = await get(run.id, { "last-event-id": "3" });
    const r = new StreamReader(res.body);
    await r.until((x) => x.ids.length === 2);
    expect(r.ids).toEqual([4, 5]);

    // A separate process with its own connection appends the way appendRunEvents does.
    const script = `
      import pg from "pg";
      const c = new pg.Client({ connectionString: process.env.URL });
      await c.connect();
      const runId = process.env.RUN_ID;
      for (let i = 0; i < 20; i++) {
        await c.query("BEGIN");
        const { rows } = await c.query('UPDATE "AgentDispatchRun" SET "lastEventSeq" = "lastEventSeq" + 1' + (i === 19 ? ', "status" = \\'succeeded\\'' : '') + ' WHERE "id" = $1 RETURNING "lastEventSeq"', [runId]);
        const seq = rows[0].lastEventSeq;
        const payload = i === 19 ? { scope: "run", from: "running", to: "succeeded", reason: "child" } : { stream: "stdout", text: "from child " + i };
        await c.query('INSERT INTO "RunEvent" ("runId", "seq", "type", "payload") VALUES ($1, $2, $3, $4)', [runId, seq, i === 19 ? "status" : "log", payload]);
        await c.query("SELECT pg_notify('airlock_run_events', $1)", [JSON.stringify({ runId, seq })]);
        await c.query("COMMIT");
        await new Promise((r) => setTimeout(r, 10));
      }
      await c.end();`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, URL: env.DATABASE_URL, RUN_ID: run.id },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    await r.toEnd(20_000);
    expect(await exited).toBe(0);
    expect(r.ids).toEqual(range(4, 25));
    expect(r.events.at(-1)).toMatchObject({ event: "end" });
    expect(JSON.parse(r.events.at(-2)!.data)).toMatchObject({ type: "status", payload: { to: "succeeded" } });
  });

  it("cleans up subscribers of clients that disconnect, on one LISTEN connection", async () => {
    const run = await createRun({ repositoryId: repoId, status: "running" });
    const hub = defaultHub();
    await hub.ready();
    const before = hub.stats().subscribers;
    const streamsBefore = openStreamCount();
    const aborts = [new AbortController(), new AbortController(), new AbortController()];
    const readers = await Promise.all(aborts.map(async (a) => new StreamReader((await get(run.id, {}, "", a.signal)).body)));
    await appendMany(run.id, 1);
    await Promise.all(readers.map((r) => r.until((x) => x.ids.length === 1)));
    expect(hub.stats().subscribers).toBe(before + 3);
    expect(openStreamCount()).toBe(streamsBefore + 3);
    for (const a of aborts) a.abort();
    await expect.poll(() => hub.stats().subscribers).toBe(before);
    expect(openStreamCount()).toBe(streamsBefore);
    const { rows } = await pgQuery(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'airlock-run-events'`,
    );
    expect(rows[0]?.n).toBe(1);
  });

  it("refuses an account's streams past its cap with 429 and Retry-After, and frees a slot when one closes", async () => {
    const run = await createRun({ repositoryId: repoId, status: "running" });
    const capped = (signal?: AbortSignal) =>
      runEventsResponse(new Request(`http://localhost:3000/api/runs/${run.id}/events`, { headers: { cookie }, signal }), run.id, { maxStreamsPerUser: 2 });
    const other = await createUser();
    await db.membership.create({ data: { userId: other.id, repositoryId: repoId, role: "viewer" } });
    const base = openStreamCount(viewer.id);
    expect(base).toBe(0);
    const aborts = [new AbortController(), new AbortController()];
    const open = await Promise.all(aborts.map((a) => capped(a.signal)));
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    expect(openStreamCount(viewer.id)).toBe(2);

    const refused = await capped();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("10");
    expect((await refused.json()).error.message).toMatch(/2 live views open/);
    expect(openStreamCount(viewer.id)).toBe(2);
    // Another account is not affected by this one's streams.
    const theirs = await runEventsResponse(
      new Request(`http://localhost:3000/api/runs/${run.id}/events`, { headers: { cookie: await cookieFor(other) } }),
      run.id,
      { maxStreamsPerUser: 2 },
    );
    expect(theirs.status).toBe(200);
    await theirs.body!.cancel();

    aborts[0]!.abort();
    await expect.poll(() => openStreamCount(viewer.id)).toBe(1);
    const again = await capped(aborts[1]!.signal);
    expect(again.status).toBe(200);
    aborts[1]!.abort();
    await expect.poll(() => openStreamCount(viewer.id)).toBe(0);
    expect(openStreamCount(other.id)).toBe(0);
  });

  it("catches up by seq after the LISTEN connection is killed, losing nothing", async () => {
    const run = await createRun({ repositoryId: repoId, status: "running" });
    const hub = defaultHub();
    await hub.ready();
    const connects = hub.stats().listenConnects;
    const r = new StreamReader((await get(run.id)).body);
    await appendMany(run.id, 2);
    await r.until((x) => x.ids.length === 2);
    await pgQuery(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'airlock-run-events'`,
    );
    // Appended while nobody listens: no notification will ever arrive for these.
    await appendMany(run.id, 3);
    await expect.poll(() => hub.stats().listenConnects, { timeout: 10_000 }).toBe(connects + 1);
    await r.until((x) => x.ids.length === 5);
    expect(r.ids).toEqual([1, 2, 3, 4, 5]);
    await finishRun(run.id);
    await r.toEnd();
    expect(r.ids).toEqual(range(1, 6));
  });
});

describe("a slow client", () => {
  it("is dropped at the bound, and resumes from its Last-Event-ID with no gap and no repeat", async () => {
    const hub = new RunEventHub({ connectionString: env.DATABASE_URL!, db, limits: { maxItems: 50 } });
    try {
      await hub.ready();
      const run = await createRun({ repositoryId: repoId, status: "running" });
      const req = new Request(`http://localhost:3000/api/runs/${run.id}/events`, { headers: { cookie } });
      const slow = new StreamReader((await runEventsResponse(req, run.id, { hub })).body);
      // Caught up with its (empty) backlog, the subscriber is fed by the hub.
      await slow.until((x) => x.parserComments > 0);
      await expect.poll(() => hub.stats().live).toBe(1);
      await appendMany(run.id, 5);
      await slow.until((x) => x.ids.length === 5);
      // Stop reading; keep appending in small commits until the hub gives up on it.
      for (let i = 0; i < 30 && hub.stats().dropped === 0; i++) {
        await appendMany(run.id, 10, 10);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(hub.stats().dropped).toBe(1);
      expect(hub.stats().subscribers).toBe(0);
      await finishRun(run.id);
      // What was already handed to the stream still arrives, then it closes without `end`.
      await slow.toEnd();
      expect(slow.events.some((e) => e.event === "end")).toBe(false);
      const got = slow.ids;
      expect(got).toEqual(range(1, got.length));

      const again = new Request(req.url, { headers: { cookie, "last-event-id": String(got.at(-1)) } });
      const rest = await new StreamReader((await runEventsResponse(again, run.id, { hub })).body).toEnd();
      const total = (await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).lastEventSeq;
      expect([...got, ...rest.ids]).toEqual(range(1, total));
      expect(rest.events.at(-1)?.event).toBe("end");
    } finally {
      await hub.stop();
    }
  });
});

describe("a client that stops reading during its backlog", () => {
  it("holds no queue at all: it is not fed until it reads again, then resumes where it stopped", async () => {
    const hub = new RunEventHub({ connectionString: env.DATABASE_URL!, db, limits: { maxItems: 50 } });
    try {
      await hub.ready();
      const run = await createRun({ repositoryId: repoId, status: "running" });
      await appendMany(run.id, 20);
      const req = new Request(`http://localhost:3000/api/runs/${run.id}/events`, { headers: { cookie } });
      const r = new StreamReader((await runEventsResponse(req, run.id, { hub, page: { limit: 5, maxBytes: 1_000_000 } })).body);
      await r.until((x) => x.ids.length >= 5);
      for (let i = 0; i < 10; i++) await appendMany(run.id, 10, 10);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hub.stats()).toMatchObject({ subscribers: 1, live: 0, dropped: 0, reads: 0 });
      await finishRun(run.id);
      await r.toEnd();
      expect(r.ids).toEqual(range(1, 121));
    } finally {
      await hub.stop();
    }
  });
});

describe("GET /api/runs/stream (the runs list)", () => {
  it("sends status changes of the runs the user can see, and nothing of the others", async () => {
    const hidden = await createRepository();
    const mine = await createRun({ repositoryId: repoId, status: "queued" });
    const theirs = await createRun({ repositoryId: hidden.id, status: "queued" });
    expect((await routed(new Request("http://localhost:3000/api/runs/stream"))).status).toBe(401);
    const res = await routed(new Request("http://localhost:3000/api/runs/stream", { headers: { cookie } }));
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const r = new StreamReader(res.body);
    await defaultHub().ready();
    for (const run of [theirs, mine]) {
      await db.agentDispatchRun.update({ where: { id: run.id }, data: { status: "running" } });
      await appendRunEvents({ db, runId: run.id, events: [{ type: "status", payload: { scope: "run", from: "queued", to: "running", reason: "started" } }] });
    }
    await r.until((x) => x.events.some((e) => e.event === "run"));
    // Both changes were committed before the first frame arrived; anything about the hidden run would follow within a window.
    await r.drain(800);
    const changes = r.events.filter((e) => e.event === "run").map((e) => JSON.parse(e.data) as { id: string; status: string });
    expect(changes).toEqual([expect.objectContaining({ id: mine.id, status: "running" })]);
  });
});

async function pgQuery(sql: string) {
  const c = new pg.Client({ connectionString: env.DATABASE_URL });
  await c.connect();
  try {
    return await c.query<{ n: number }>(sql);
  } finally {
    await c.end();
  }
}
