// PostgreSQL bytes per transcript event: `npm run bench -- storage [--events 100000]`.
// Inserts the run-view bench's synthetic transcript (messages, tool calls and results, logs, cost,
// heartbeats) into one run of a throwaway, migrated PostgreSQL and reports the JSON bytes and the
// table's size on disk (heap, TOAST and indexes, after VACUUM) per event: the figure the README's
// scale section multiplies into PostgreSQL size per month.
import { spawnSync } from "node:child_process";
import pg from "pg";
import { bulkInsertEvents, createRepository, createRun } from "./runview/data";

if (!process.env.DATABASE_URL) {
  const r = spawnSync(process.execPath, ["scripts/with-db.mjs", "--", process.execPath, "--import", "tsx", "bench/storage.ts", ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const i = process.argv.indexOf("--events");
const asked = i === -1 ? NaN : Number(process.argv[i + 1]);
const EVENTS = Number.isInteger(asked) && asked > 0 && asked <= 1_000_000 ? asked : 100_000;

async function main() {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const size = async () => Number((await db.query<{ bytes: string }>(`SELECT pg_total_relation_size('"RunEvent"') AS bytes`)).rows[0]!.bytes);
  await db.query(`VACUUM "RunEvent"`);
  const before = await size();
  const run = await createRun(db, await createRepository(db), "storage bench");
  const json = await bulkInsertEvents(db, run, EVENTS);
  await db.query(`VACUUM ANALYZE "RunEvent"`);
  const disk = (await size()) - before;
  console.log(`\n${EVENTS.toLocaleString("en")} transcript events in one run: ${(json / EVENTS).toFixed(0)} bytes of JSON per event, ${(disk / EVENTS).toFixed(0)} bytes on disk per event (RunEvent with TOAST and indexes, after VACUUM)`);
  await db.end();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
