// Run view benchmark, against the production build (`npm run build` first).
//   npx tsx bench/runview.ts            (or: npm run bench -- runview)
// Starts its own `node scripts/with-db.mjs -- next start` on a free port, then:
//  (a) Chromium on a run with 100,000 events (~20 MB of JSON): time to first
//      transcript paint, time to jump to the oldest event, JS heap after load,
//      append-to-DOM latency of live events at 200/s;
//  (b) 1,000 concurrent SSE streams on the one server process while events are
//      appended at 200/s: connected streams, append-to-receive p50/p99, server
//      RSS; and the same load on a plain node:http SSE server as the reference.
// Bounded in time (a few minutes); prints a table; exits 0 when it could measure.
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { browserBench } from "./runview/browser";
import { appendAtRate, bulkInsertEvents, createRepository, createRun } from "./runview/data";
import { freePort, rssOf, startServer } from "./runview/server";
import { sseLoad, type LoadResult } from "./runview/sse-load";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1_000);
const RATE = 200;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** BENCH_ONLY=a or b runs one half. */
const ONLY = process.env.BENCH_ONLY ?? "";

const targets = { firstPaintMs: 1_500, heapMb: 150, liveP99: 250, sseP99: 250, rssMb: 1_024 };
const ok = (pass: boolean) => (pass ? "ok" : "MISSED");
const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : "n/a");

async function referenceLoad(databaseUrl: string, runId: string, db: Parameters<typeof appendAtRate>[0]): Promise<LoadResult> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, "bench/runview/reference-server.mjs"), databaseUrl, String(port)], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolveReady, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolveReady());
    child.once("exit", (code) => reject(new Error(`reference server exited (${code})`)));
  });
  try {
    return await sseLoad({
      url: `http://127.0.0.1:${port}/runs/${runId}/events`,
      headers: {},
      streams: STREAMS,
      pids: () => [child.pid!],
      rss: rssOf,
      append: (onCommit) => appendAtRate(db, runId, RATE, SECONDS, onCommit),
    });
  } finally {
    child.kill("SIGTERM");
  }
}

async function main() {
  console.log(`run view benchmark: ${EVENTS.toLocaleString("en")} events, ${STREAMS.toLocaleString("en")} streams, ${RATE} events/s for ${SECONDS} s`);
  const server = await startServer(root);
  try {
    const repositoryId = await createRepository(server.db);
    const bigRun = await createRun(server.db, repositoryId, "Bench: 100k-event transcript");
    const t0 = Date.now();
    const bytes = await bulkInsertEvents(server.db, bigRun, EVENTS);
    console.log(`seeded ${EVENTS.toLocaleString("en")} events (${(bytes / 1024 / 1024).toFixed(1)} MB of JSON) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const smallRun = await createRun(server.db, repositoryId, "Bench: small run (warm-up)");
    await bulkInsertEvents(server.db, smallRun, 50);
    const page = ONLY === "b" ? null : await browserBench(server, bigRun, smallRun, { rate: RATE, seconds: SECONDS });
    if (page) console.log("(a) browser done");

    let next: LoadResult | null = null;
    let ref: LoadResult | null = null;
    if (ONLY !== "a") {
      const liveRun = await createRun(server.db, repositoryId, "Bench: live fan-out");
      next = await sseLoad({
        url: `${server.base}/api/runs/${liveRun}/events?lastEventId=0`,
        headers: { cookie: server.cookie },
        streams: STREAMS,
        pids: server.serverPids,
        rss: rssOf,
        append: (onCommit) => appendAtRate(server.db, liveRun, RATE, SECONDS, onCommit),
      });
      console.log("(b) Airlock streams done");
      const refRun = await createRun(server.db, repositoryId, "Bench: reference fan-out");
      ref = await referenceLoad(server.databaseUrl, refRun, server.db);
      console.log("(b) reference streams done\n");
    }

    const rows: [string, string, string, string][] = [];
    if (page) {
      rows.push(
        ["(a) first transcript paint, 100k-event run (warm server, first visit)", ms(page.firstPaintMs), `< ${targets.firstPaintMs} ms`, ok(page.firstPaintMs < targets.firstPaintMs)],
        ["(a) … same, second visit (scripts cached)", ms(page.firstPaintWarmMs), `< ${targets.firstPaintMs} ms`, ok(page.firstPaintWarmMs < targets.firstPaintMs)],
        ["(a) … time to first byte / DOMContentLoaded", `${ms(page.ttfbMs)} / ${ms(page.domContentLoadedMs)}`, "", ""],
        ["(a) … virtualised list live (after hydration)", ms(page.interactiveMs), "", ""],
        ["(a) jump to the oldest event (g g)", ms(page.oldestMs), "", ""],
        ["(a) JS heap after load (after GC)", `${page.heapMb.toFixed(1)} MB`, `< ${targets.heapMb} MB`, ok(page.heapMb < targets.heapMb)],
        ["(a) rows in the DOM after scrolling", String(page.mountedRows), "≤ 500", ok(page.mountedRows <= 500)],
        ["(a) longest main-thread task while jumping/scrolling", ms(page.longestTaskMs), "", ""],
        // Virtualised: a row that scrolls past within one frame is never mounted, so it has no DOM time.
        [`(a) live events mounted in the DOM (of ${page.live.appended} at ${RATE}/s)`, String(page.live.seen), "", ""],
        ["(a) live append-to-DOM p50 / p99", `${ms(page.live.p50)} / ${ms(page.live.p99)}`, `p99 < ${targets.liveP99} ms`, ok(page.live.p99 < targets.liveP99)],
      );
    }
    if (next && ref) {
      rows.push(
        ["(b) Airlock: streams connected", `${next.connected} / ${next.streams} in ${next.connectSeconds.toFixed(1)} s`, `${next.streams}`, ok(next.connected === next.streams)],
        ["(b) Airlock: events received", `${next.received.toLocaleString("en")} / ${(next.appended * next.connected).toLocaleString("en")}`, "all", ok(next.received === next.appended * next.connected)],
        ["(b) Airlock: append-to-receive p50 / p99", `${ms(next.p50)} / ${ms(next.p99)}`, `p99 < ${targets.sseP99} ms`, ok(next.p99 < targets.sseP99)],
        ["(b) Airlock: server RSS (max)", `${next.maxRssMb.toFixed(0)} MB`, `< ${targets.rssMb} MB`, ok(next.maxRssMb < targets.rssMb)],
        ["(b) node:http reference: connected / received", `${ref.connected} / ${ref.streams}, ${ref.received.toLocaleString("en")}`, "", ""],
        ["(b) node:http reference: p50 / p99", `${ms(ref.p50)} / ${ms(ref.p99)}`, "", ""],
        ["(b) node:http reference: RSS (max)", `${ref.maxRssMb.toFixed(0)} MB`, "", ""],
        ["(b) ratio Airlock / reference: p99, RSS", `${(next.p99 / ref.p99).toFixed(1)}x, ${(next.maxRssMb / ref.maxRssMb).toFixed(1)}x`, "", ""],
      );
    }
    console.log("| measure | result | target | |");
    console.log("| --- | --- | --- | --- |");
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
