import { resolve } from "node:path";
import { bulkInsertEvents, createRepository, createRun } from "./runview/data";
import { startServer } from "./runview/server";
const server = await startServer(resolve("."));
try {
  const repo = await createRepository(server.db);
  const run = await createRun(server.db, repo, "diag");
  await bulkInsertEvents(server.db, run, 100_000);
  const other = await createRun(server.db, repo, "small");
  const time = async (label: string, url: string) => {
    const t = Date.now();
    const r = await fetch(url, { headers: { cookie: server.cookie } });
    const body = await r.text();
    console.log(label, r.status, Date.now() - t, "ms", body.length, "bytes");
  };
  await time("small page (cold)", `${server.base}/runs/${other}`);
  await time("small page", `${server.base}/runs/${other}`);
  for (let i = 0; i < 3; i++) await time("big page", `${server.base}/runs/${run}`);
  const input = encodeURIComponent(JSON.stringify({ "0": { json: { runId: run, limit: 500 } } }));
  for (let i = 0; i < 3; i++) await time("events window", `${server.base}/api/trpc/runs.events?batch=1&input=${input}`);
  const byId = encodeURIComponent(JSON.stringify({ "0": { json: { runId: run } } }));
  for (let i = 0; i < 2; i++) await time("byId", `${server.base}/api/trpc/runs.byId?batch=1&input=${byId}`);
  const ex = await server.db.query(`EXPLAIN ANALYZE SELECT "seq", "type", "payload", "attemptId", "createdAt",
               (sum(octet_length("payload"::text)) OVER (ORDER BY "seq" DESC) - octet_length("payload"::text))::float8 AS "size"
        FROM (SELECT * FROM "RunEvent" WHERE "runId" = $1 AND "seq" < $2 ORDER BY "seq" DESC LIMIT $3) page
        ORDER BY "seq" DESC`, [run, 2147483647, 500]);
  console.log(ex.rows.map((r) => r["QUERY PLAN"]).join("\n"));
} finally {
  await server.stop();
}
