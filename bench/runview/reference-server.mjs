// The reference for (b): a plain node:http SSE server doing the same work as
// Airlock's endpoint minus the framework (one LISTEN connection, one read per
// notification burst, the same frames), so the ratio shows what Next.js and the
// app's checks cost. Bench only: no auth, loopback only, started and stopped by
// bench/runview.ts.
//   node bench/runview/reference-server.mjs <databaseUrl> <port>
import http from "node:http";
import pg from "pg";

const [databaseUrl, port] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
const listen = new pg.Client({ connectionString: databaseUrl });
await listen.connect();
await listen.query("LISTEN airlock_run_events");

/** runId -> { subs: Set<{ res, last }>, fetching, wanted } */
const runs = new Map();

async function deliver(runId, state) {
  if (state.fetching) return;
  state.fetching = true;
  try {
    while (state.wanted > state.sent && state.subs.size > 0) {
      const { rows } = await pool.query(
        `SELECT "seq", "type", "payload"::text AS "payload", "attemptId", "createdAt" FROM "RunEvent" WHERE "runId" = $1 AND "seq" > $2 ORDER BY "seq" LIMIT 500`,
        [runId, state.sent],
      );
      if (rows.length === 0) break;
      const frames = rows
        .map((r) => `id: ${r.seq}\nevent: ${r.type}\ndata: {"seq":${r.seq},"type":"${r.type}","attemptId":null,"createdAt":"${r.createdAt.toISOString()}","payload":${r.payload}}\n\n`)
        .join("");
      state.sent = rows.at(-1).seq;
      for (const sub of state.subs) sub.res.write(frames);
    }
  } finally {
    state.fetching = false;
  }
}

listen.on("notification", (msg) => {
  const { runId, seq } = JSON.parse(msg.payload);
  const state = runs.get(runId);
  if (!state) return;
  state.wanted = Math.max(state.wanted, seq);
  void deliver(runId, state);
});

http
  .createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const m = /^\/runs\/([^/]+)\/events$/.exec(url.pathname);
    if (!m) return res.writeHead(404).end();
    const runId = m[1];
    const after = Number(req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? 0);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform" });
    res.write("retry: 2000\n\n: connected\n\n");
    let state = runs.get(runId);
    if (!state) {
      const { rows } = await pool.query(`SELECT "lastEventSeq" FROM "AgentDispatchRun" WHERE "id" = $1`, [runId]);
      state = runs.get(runId) ?? { subs: new Set(), fetching: false, wanted: 0, sent: Math.max(after, rows[0]?.lastEventSeq ?? 0) };
      runs.set(runId, state);
    }
    const sub = { res };
    state.subs.add(sub);
    req.on("close", () => state.subs.delete(sub));
  })
  .listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
