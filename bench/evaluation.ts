// Evaluation cost per delivery, in figures a busy machine barely moves: `npm run bench -- evaluation`.
// For each delivery shape, the "delivery.evaluate" job handler (evaluateDeliveryTask, what the
// worker runs) evaluates recorded deliveries one after another in this process, and the bench
// reports per delivery:
//  - the SQL statements sent (counted at the pg driver, as bench/queue.ts counts the claim's), in
//    all and inside transactions;
//  - the CPU seconds of this process (process.cpuUsage: user + system), i.e. the worker's CPU;
//  - the wall-clock milliseconds, for reference only (they move with the machine's load).
// Shapes: a failed check no rule matches (its CI records and triage are still written), a release
// no rule of its kind is configured for, a delivery about an unregistered repository, and a failed
// check that dispatches a run. (An event Airlock ignores, a successful job, is recorded as final
// by the webhook route and never reaches the worker.)
// Starts its own throwaway PostgreSQL through scripts/with-db.mjs.
//
// Where the time goes (`--cpu-prof`, 2026-12-02, 300 deliveries per shape, load 3-4 on 2 CPUs):
// 23.8 s sampled, 7.9 s idle (waiting on PostgreSQL); of the 15.9 s busy, by self time:
//   1. writev (native), 23%: the pg driver's socket write, one per statement (Client.query ->
//      Writable.uncork -> Socket._writev): about 150 us of syscall per statement on this machine;
//   2. the garbage collector, 8%;
//   3-5. Prisma Client's query building and result mapping (Hn, Ni, nestArgument), 3% each; Prisma
//      Client as a whole is 31% and its query compiler (wasm) 3.5%; pg and pg-protocol 5%.
// Airlock's own code (matching, redaction, context assembly) is under 2% in all. So a delivery
// costs about 0.5 ms of worker CPU per statement it sends, and a failed check sends 29-30 (22 in
// its transaction: records, triage, notification, the delivery's outcome) and one that dispatches
// 37-38: the cut is fewer statements per delivery, not faster code.
//
//   npm run bench -- evaluation [--deliveries 150] [--trace] [--cpu-prof] [--units 60] [--workers 1,2,4] [--batch 64]
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { printProfile, summariseProfile } from "./lib/cpu-profile";
import { stormRows } from "./lib/worker-storm";

if (!process.env.DATABASE_URL) {
  // Re-run under a throwaway, migrated PostgreSQL (the server modules read DATABASE_URL at import).
  // --cpu-prof: the run is profiled (node --cpu-prof) and its busiest functions printed after it.
  const profileDir = process.argv.includes("--cpu-prof") ? mkdtempSync(join(tmpdir(), "airlock-eval-prof-")) : null;
  const profile = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  const r = spawnSync(process.execPath, ["scripts/with-db.mjs", "--", process.execPath, ...profile, "--import", "tsx", "bench/evaluation.ts", ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, AIRLOCK_LOG_LEVEL: process.env.AIRLOCK_LOG_LEVEL ?? "warn", BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "bench-secret-not-for-production-000" },
  });
  if (profileDir) {
    // The bench's own process is the largest profile (tsx's loader thread writes a small one).
    const [largest] = readdirSync(profileDir).map((f) => join(profileDir, f)).sort((a, b) => statSync(b).size - statSync(a).size);
    if (largest) printProfile(summariseProfile(largest, 8), `the bench process (setup included; ${largest})`);
  }
  process.exit(r.status ?? 1);
}

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(process.argv[i + 1]);
  return v !== undefined && Number.isInteger(v) && v > 0 && v <= 100_000 ? v : fallback;
};
const DELIVERIES = arg("deliveries", 150);
// The storm part: --units N (10 deliveries each), --workers 1,2,4 (--workers 0: skip it).
const UNITS = arg("units", 60);
const WORKER_COUNTS = (() => {
  const i = process.argv.indexOf("--workers");
  const list = (i === -1 ? "1,2,4" : (process.argv[i + 1] ?? "")).split(",").map(Number);
  return list.every((n) => Number.isInteger(n) && n >= 0 && n <= 8) ? list.filter((n) => n > 0) : [1, 2, 4];
})();
const WARMUP = 20;
// --batch N: deliveries per job in the storm's batched rows (ingest's DELIVERY_BATCH_MAX by default).
const BATCH = Math.min(arg("batch", 64), 64);
// --trace: print the statements of each shape's first measured delivery (to stderr).
const TRACE = process.argv.includes("--trace");

type Shape = { name: string; make: (n: number) => { event: string; action: string | null; payload: Record<string, unknown> }; runsEach: number };

async function main() {
  const { getDb } = await import("@/server/db");
  const { failedWorkflowJob, releasePublished } = await import("@/server/domain/ingest/fixtures/deliveries");
  const { createRule, createStack } = await import("@/server/domain/ingest/fixtures/world");
  const { evaluateDeliveryTask } = await import("@/server/queue/tasks/evaluate-delivery");
  const db = getDb();

  const stack = await createStack(db, { name: "bench-evaluation" });
  const quiet = await db.repository.create({ data: { fullName: "bench/no-rule-matches", cloneUrl: "https://example.test/quiet.git" } });
  // A rule for another job: every failure of this repository is a failed check no rule matches.
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: quiet.id, job: "deploy-production" });
  const busy = await db.repository.create({ data: { fullName: "bench/dispatches", cloneUrl: "https://example.test/busy.git" } });
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: busy.id, action: "suggest" });

  let serial = 0;
  const failure = (repo: string) => {
    const n = serial++;
    const d = failedWorkflowJob({ repo, runId: 10_000_000 + n, jobId: 20_000_000 + n, jobName: "test", step: "Run npm test", headSha: randomBytes(20).toString("hex"), headBranch: "bench" });
    return { event: d.event, action: "completed", payload: d.payload };
  };
  const shapes: Shape[] = [
    { name: "failed check, no rule matches", make: () => failure(quiet.fullName), runsEach: 0 },
    { name: "release, no release rule", make: (n) => ({ ...releasePublished({ repo: busy.fullName, tag: `v1.${serial++}.${n}`, targetCommitish: "main" }), action: "published" }), runsEach: 0 },
    { name: "unregistered repository", make: () => failure("elsewhere/not-registered"), runsEach: 0 },
    { name: "failed check that dispatches", make: () => failure(busy.fullName), runsEach: 1 },
  ];

  const counted = { total: 0, inTx: 0, open: new WeakSet<object>(), on: false, trace: false };
  const query = pg.Client.prototype.query;
  // Bench-only instrumentation: count every statement the driver sends while a delivery evaluates.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counted.on) {
      const first = args[0];
      const text = (typeof first === "string" ? first : ((first as { text?: string } | undefined)?.text ?? "")).trimStart().toUpperCase();
      counted.total++;
      if (TRACE && counted.trace) process.stderr.write(`  ${counted.total}: ${text.replace(/\s+/g, " ").slice(0, 160)}\n`);
      if (text.startsWith("BEGIN")) counted.open.add(this);
      if (counted.open.has(this)) counted.inTx++;
      if (text.startsWith("COMMIT") || text.startsWith("ROLLBACK")) counted.open.delete(this);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;

  const record = async (shape: Shape, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const d = shape.make(i);
      const deliveryId = `bench-eval-${process.pid}-${serial}-${i}`;
      await db.webhookDelivery.create({ data: { deliveryId, source: "github", event: d.event, action: d.action, payload: d.payload as object, outcome: "received", receivedAt: new Date() } });
      ids.push(deliveryId);
    }
    return ids;
  };

  const results: { name: string; statements: string; inTx: string; cpuMs: number; wallMs: number; runs: number; expectedRuns: number }[] = [];
  for (const shape of shapes) {
    for (const deliveryId of await record(shape, WARMUP)) await evaluateDeliveryTask({ deliveryId }, { db });
    const ids = await record(shape, DELIVERIES);
    const runsBefore = await db.agentDispatchRun.count();
    const perDelivery: { total: number; inTx: number }[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    if (TRACE) process.stderr.write(`${shape.name}:\n`);
    for (const [i, deliveryId] of ids.entries()) {
      Object.assign(counted, { total: 0, inTx: 0, open: new WeakSet<object>(), on: true, trace: i === 0 });
      await evaluateDeliveryTask({ deliveryId }, { db });
      counted.on = false;
      perDelivery.push({ total: counted.total, inTx: counted.inTx });
    }
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const unprocessed = await db.webhookDelivery.count({ where: { deliveryId: { in: ids }, processedAt: null } });
    if (unprocessed > 0) throw new Error(`${shape.name}: ${unprocessed} deliveries left unevaluated`);
    const range = (xs: number[]) => (Math.min(...xs) === Math.max(...xs) ? String(xs[0]) : `${Math.min(...xs)}-${Math.max(...xs)}`);
    results.push({
      name: shape.name,
      statements: range(perDelivery.map((p) => p.total)),
      inTx: range(perDelivery.map((p) => p.inTx)),
      cpuMs: (cpu.user + cpu.system) / 1000 / ids.length,
      wallMs: wall / ids.length,
      runs: (await db.agentDispatchRun.count()) - runsBefore,
      expectedRuns: shape.runsEach * ids.length,
    });
  }
  pg.Client.prototype.query = query;

  const row = (cells: (string | number)[]) => console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 36 : 16)).join(""));
  console.log(`\ndelivery.evaluate, one delivery at a time in this process, ${DELIVERIES} deliveries per shape (after ${WARMUP} warm-up).`);
  console.log(`Load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} CPUs (wall-clock moves with it; statements and CPU barely do).`);
  row(["", "SQL statements", "in transaction", "worker CPU ms", "wall ms", "runs (expected)"]);
  for (const r of results) row([r.name, r.statements, r.inTx, r.cpuMs.toFixed(2), r.wallMs.toFixed(1), `${r.runs} (${r.expectedRuns})`]);
  const shapesOk = results.every((r) => r.runs === r.expectedRuns);
  console.log(shapesOk ? "\nruns as expected" : "\nRUNS NOT AS EXPECTED");
  if (WORKER_COUNTS.length === 0) {
    await db.$disconnect();
    return shapesOk;
  }

  const evaluateJob = async (ids: readonly string[], batched: boolean) => {
    const out = await evaluateDeliveryTask(batched ? ids.map((deliveryId) => ({ deliveryId })) : { deliveryId: ids[0] }, { db });
    if (Array.isArray(out)) await Promise.all(out);
  };
  const storm = await stormRows({ db, repos: { busy: busy.fullName, quiet: quiet.fullName }, units: UNITS, workerCounts: WORKER_COUNTS, batch: BATCH, evaluate: evaluateJob });
  console.log(`\nA storm backlog of ${UNITS * 10} deliveries (per 10: one failure that dispatches sent as 5 delivery ids, its first job queued twice; 3 failures no rule matches; 2 releases no rule wants),`);
  console.log(`queued at once and evaluated by the bare handler here, then by N worker processes (graphile-worker); "k per job": deliveries one job names. Load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}.`);
  const srow = (cells: (string | number)[]) => console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 36 : 15)).join(""));
  srow(["", "deliveries/s", "seconds", "worker CPU ms", "PostgreSQL ms", "DB bytes", "dedupe"]);
  for (const r of storm) srow([r.label, r.rate.toFixed(0), r.seconds.toFixed(1), r.workerCpuMs.toFixed(2), r.databaseCpuMs.toFixed(2), r.bytes.toFixed(0), `${r.exact ? "exact" : "NOT EXACT"}: ${r.note}`]);
  console.log("(CPU ms and DB bytes per delivery; worker CPU: all worker processes together, from /proc; DB bytes: growth of pg_database_size.)");
  console.log(`previous figure (issue #21, \`npm run bench -- webhooks\`, every delivery a failure that dispatches): 65 deliveries/s, one worker`);
  const stormOk = storm.every((r) => r.exact);
  await db.$disconnect();
  return shapesOk && stormOk;
}

main()
  .then((ok) => process.exit(ok ? 0 : 1))
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
