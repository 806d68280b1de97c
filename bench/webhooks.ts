// Webhook ingest benchmark against the production server: signed GitHub deliveries posted over
// loopback by concurrent keep-alive clients, compared with a bare route handler on the same
// server; then, for 1, 2 and 4 worker processes, a redelivery storm evaluated by them, whose
// runs, drops, triage decisions and write-backs must come out exactly as expected.
//
//   npm run build && npm run bench -- webhooks [--seconds 12] [--rounds 3] [--concurrency 16]
//     [--units 30] [--workers 1,2,4] [--busy-seconds 6] [--worker-nice 10]
//
// Starts its own throwaway PostgreSQL (scripts/with-db.mjs --seed --serve), the web server on a
// free port with GITHUB_WEBHOOK_SECRET and AIRLOCK_BENCH=1, and worker processes (`node --import
// tsx server/queue/worker.ts`, what `npm start` runs, each its own graphile-worker); stops them
// all at the end. Phases: warm-up with one worker; the bare route and the webhook route
// alternating with no worker (deliveries queue up; that backlog is then discarded). Then per
// worker count N: a storm (--units x 14 sends) posted through the route with no worker running,
// its jobs held in the queue (run_at far ahead) while N workers start and warm up on a small
// storm of their own, released to all at once
// and drained: deliveries/s, CPU seconds per delivery of the workers together and of PostgreSQL
// (/proc, so a busy machine shows in the rates, not in it), each worker's share of that CPU,
// and the dedupe checked exactly; then the webhook route again with those N workers evaluating.
// Targets: webhook route >= 0.6x the bare route's rate, p99 < 150 ms, exact dedupe in every row.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import http from "node:http";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createPrismaClient, type PrismaClient } from "@/server/db";
import { failedWorkflowJob } from "@/server/domain/ingest/fixtures/deliveries";
import { createRule, createStack } from "@/server/domain/ingest/fixtures/world";
import { fromGithub } from "@/server/domain/ingest/from-github";
import { signBody } from "@/server/domain/ingest/signature";
import { loadFacts } from "@/server/domain/evaluation/facts";
import { liveRulesFor, planEvaluation } from "@/server/domain/evaluation/plan";
import { freePort, repoRoot } from "../scripts/lib/postgres.mjs";
import { treeCpuSeconds } from "./lib/proc-cpu";
import { discardBacklog, drained, holdEvaluations, releaseEvaluations, SENDS_PER_UNIT, stormSends, verdict as checkStorm, type Send, type StormRepos, type Verdict } from "./lib/route-storm";
import { ready, startWorker as startWorkerProcess, stopWorker } from "./lib/worker-storm";
import { webServerArgs } from "../scripts/lib/web-server.mjs";

const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 150;

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(process.argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
};
const SECONDS = arg("seconds", 12);
const CONCURRENCY = arg("concurrency", 16);
// --units N: storm units per worker row (14 sends, 10 deliveries each); --workers 1,2,4.
const UNITS = arg("units", 30);
const BUSY_SECONDS = arg("busy-seconds", 6);
const WORKER_COUNTS = (() => {
  const i = process.argv.indexOf("--workers");
  const list = (i === -1 ? "1,2,4" : (process.argv[i + 1] ?? "")).split(",").map(Number);
  return list.length > 0 && list.every((n) => Number.isInteger(n) && n >= 1 && n <= 8) ? list : [1, 2, 4];
})();
const WORKER_NICE = arg("worker-nice", 10);
const ROUNDS = arg("rounds", 3);

const secret = randomBytes(24).toString("base64url");
const children: ChildProcess[] = [];
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv, name: string): ChildProcess {
  // Own process group, so stopping it stops what it started (next's workers, PostgreSQL).
  const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  // Always drain both pipes (a full pipe blocks the child), showing only errors.
  const show = (b: Buffer) => {
    const text = b.toString();
    if (/error|fail/i.test(text) && !/error handlers/.test(text)) process.stderr.write(`[${name}] ${text}`);
  };
  child.stderr?.on("data", show);
  if (name !== "db") child.stdout?.on("data", show);
  children.push(child);
  return child;
}

async function stopAll() {
  for (const child of children.reverse()) {
    if (child.exitCode !== null || child.pid === undefined) continue;
    const exited = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // Not a group leader (a worker process, started by lib/worker-storm), or already gone.
      child.kill("SIGTERM");
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  }
}

async function startDatabase(): Promise<string> {
  const child = start(process.execPath, ["scripts/with-db.mjs", "--seed", "--serve"], { ...process.env, DATABASE_URL: "" }, "db");
  procs.database = child.pid;
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (b: Buffer) => {
      buf += b.toString();
      const m = /^DATABASE_URL=(.+)$/m.exec(buf);
      if (m?.[1]) resolve(m[1].trim());
    });
    child.once("exit", (code) => reject(new Error(`with-db exited (${code})`)));
  });
}

async function waitFor(url: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then((r) => r.ok).catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer in time`);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

function post(port: number, path: string, event: string, deliveryId: string, body: string, readBody = false): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-github-event": event,
          "x-github-delivery": deliveryId,
          "x-hub-signature-256": signBody(secret, body),
          ...(readBody ? { "x-bench-read-body": "1" } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

let serial = 0;
/** A distinct failed job each call (a new SHA and ids): every delivery is accepted and evaluated. */
function nextFailure(repo: string) {
  const n = serial++;
  const d = failedWorkflowJob({ repo, runId: 10_000_000 + n, jobId: 20_000_000 + n, jobName: "test", step: "Run npm test", headSha: randomBytes(20).toString("hex"), headBranch: "bench" });
  return { event: d.event, body: JSON.stringify(d.payload), deliveryId: `bench-${process.pid}-${n}` };
}


type Cpu = { web: number; database: number; worker: number };
const procs: { web?: number; database?: number; workers: number[] } = { workers: [] };
const cpuNow = (): Cpu => ({ web: treeCpuSeconds(procs.web), database: treeCpuSeconds(procs.database), worker: procs.workers.reduce((n, pid) => n + treeCpuSeconds(pid), 0) });

type Stats = { requests: number; rate: number; p50: number; p99: number; statuses: Record<number, number>; cpu: Cpu; latencies: number[]; seconds: number };

function combine(rounds: Stats[]): Stats {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const requests = latencies.length;
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  const statuses: Record<number, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statuses)) statuses[Number(k)] = (statuses[Number(k)] ?? 0) + v;
  const cpu = (k: keyof Cpu) => rounds.reduce((n, r) => n + r.cpu[k] * r.requests, 0) / Math.max(requests, 1);
  return { requests, rate: requests / seconds, p50: q(0.5), p99: q(0.99), statuses, cpu: { web: cpu("web"), database: cpu("database"), worker: cpu("worker") }, latencies, seconds };
}

async function sustained(port: number, path: string, repo: string, seconds: number, readBody = false): Promise<Stats> {
  const cpu0 = cpuNow();
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const d = nextFailure(repo);
        const r = await post(port, path, d.event, d.deliveryId, d.body, readBody);
        latencies.push(r.ms);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  const cpu1 = cpuNow();
  const per = (k: keyof Cpu) => ((cpu1[k] - cpu0[k]) * 1000) / Math.max(latencies.length, 1);
  return { requests: latencies.length, rate: latencies.length / elapsed, p50: q(0.5), p99: q(0.99), statuses, cpu: { web: per("web"), database: per("database"), worker: per("worker") }, latencies, seconds: elapsed };
}


/** How many runs one of the bench's failures in `fullName` makes: the rules that fire (plan.ts, unit-tested). */
async function matchingRules(db: PrismaClient, fullName: string): Promise<number> {
  const repository = await db.repository.findUniqueOrThrow({ where: { fullName } });
  const rules = await liveRulesFor(db, repository.id);
  const sample = failedWorkflowJob({ repo: fullName, runId: 1, jobId: 2, jobName: "test", step: "Run npm test", headSha: "0".repeat(40), headBranch: "bench" });
  const event = fromGithub(sample.event, sample.payload);
  if (event.type === "ignored") throw new Error(`the bench's failure is ignored: ${event.reason}`);
  const extras = { log: null, changedFiles: null, artifacts: [] };
  const facts = await loadFacts({ db, repository, event, extras });
  return planEvaluation({ event, repository, facts, extras }, rules).fire.length;
}

/** Wait until the workers have evaluated every recorded delivery; returns how long it took. */
async function drain(db: PrismaClient, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs && (await db.webhookDelivery.count({ where: { processedAt: null } })) > 0) {
    await new Promise((r) => setTimeout(r, 250));
  }
  return performance.now() - t0;
}

/** N real worker processes; their pids are what the CPU columns sum. */
function startWorkers(env: NodeJS.ProcessEnv, count: number): ChildProcess[] {
  // At lower CPU priority: on one small box the acknowledgement path (GitHub's 10 s budget) must
  // win, and evaluation may lag and catch up.
  const workers = Array.from({ length: count }, () => startWorkerProcess({ env, nice: WORKER_NICE }));
  children.push(...workers);
  procs.workers = workers.map((w) => w.pid).filter((pid) => pid !== undefined);
  return workers;
}

async function stopWorkers(workers: ChildProcess[]) {
  await Promise.all(workers.map(stopWorker));
  procs.workers = [];
}

/** Posts every send over CONCURRENCY connections; the statuses it got. */
async function postAll(port: number, sends: readonly Send[]): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < sends.length; i = next++) {
        const s = sends[i]!;
        const r = await post(port, "/api/webhooks/github", s.event, s.deliveryId, s.body);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

type WorkerRow = {
  workers: number;
  deliveries: number;
  jobs: { jobs: number; sizes: number[] };
  seconds: number;
  rate: number;
  /** CPU seconds per delivery: all worker processes together, and PostgreSQL, from /proc. */
  workerCpu: number;
  databaseCpu: number;
  /** Each worker's share of the workers' CPU: an idle one shows as ~0. */
  split: number[];
  verdict: Verdict;
  busy: Stats;
};

/**
 * One row: the storm posted through the route with no worker running, its jobs held while
 * `count` workers start, released to all at once and drained; dedupe checked; then the route
 * measured again with those workers evaluating what it records.
 */
async function workerRow(port: number, db: PrismaClient, env: NodeJS.ProcessEnv, repos: StormRepos, count: number, expectedPerUnit: { runs: number; drops: number }): Promise<WorkerRow> {
  const storm = stormSends(repos, UNITS, `storm-${count}-${process.pid}`);
  log(`${count} worker(s): posting a storm of ${storm.sends.length} sends (${storm.ids.length} deliveries), no worker running...`);
  const statuses = await postAll(port, storm.sends);
  const jobs = await holdEvaluations(db);
  const workers = startWorkers(env, count);
  try {
    await ready(db, count);
    // Warm-up: every worker's modules, JIT and caches on a small storm of its own (the held
    // jobs stay held), so the row measures warm processes as a long-running worker is.
    const warm = stormSends(repos, 3 * count, `warm-${count}-${process.pid}`);
    await postAll(port, warm.sends);
    if (!(await drained(db, warm.ids, 300_000))) throw new Error(`${count} worker(s): the warm-up storm was not evaluated in time`);
    const cpu0 = workers.map((w) => treeCpuSeconds(w.pid));
    const db0 = treeCpuSeconds(procs.database);
    const t0 = performance.now();
    await releaseEvaluations(db);
    if (!(await drained(db, storm.ids, 600_000))) throw new Error(`${count} worker(s): the storm was not evaluated within 10 minutes`);
    const seconds = (performance.now() - t0) / 1000;
    const used = workers.map((w, i) => treeCpuSeconds(w.pid) - cpu0[i]!);
    const workerCpu = used.reduce((a, b) => a + b, 0);
    const databaseCpu = treeCpuSeconds(procs.database) - db0;
    const verdict = await checkStorm(db, storm, {
      runs: UNITS * expectedPerUnit.runs,
      drops: UNITS * expectedPerUnit.drops,
      statuses: { 202: storm.ids.length, 200: storm.sends.length - storm.ids.length },
      sentStatuses: statuses,
    });
    log(`${count} worker(s): webhook route for ${BUSY_SECONDS} s with them evaluating...`);
    const busy = await sustained(port, "/api/webhooks/github", repos.busy, BUSY_SECONDS);
    const deliveries = storm.ids.length;
    return { workers: count, deliveries, jobs, seconds, rate: deliveries / seconds, workerCpu: workerCpu / deliveries, databaseCpu: databaseCpu / deliveries, split: used.map((u) => u / Math.max(workerCpu, 1e-9)), verdict, busy };
  } finally {
    await stopWorkers(workers);
    // What the busy phase recorded and the workers had not reached yet.
    await discardBacklog(db);
  }
}

async function main() {
  const built = [".next/BUILD_ID", ".next/server/app/api/webhooks/github/route.js", ".next/server/app/api/bench/noop/route.js"];
  const missing = built.filter((f) => !existsSync(join(repoRoot, f)));
  if (missing.length > 0) throw new Error(`no production build with the webhook routes (${missing.join(", ")}): run \`npm run build\` first`);

  log("starting PostgreSQL (seeded demo)...");
  const databaseUrl = await startDatabase();
  const db = createPrismaClient(databaseUrl);
  const stack = await createStack(db, { name: `bench-stack-${process.pid}` });
  const busyRepo = await db.repository.create({ data: { fullName: `bench/webhooks-${process.pid}`, cloneUrl: "https://example.test/bench.git" } });
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: busyRepo.id, action: "suggest" });
  // A rule for another job: every failure here is a failed check no rule of its own matches.
  const quietRepo = await db.repository.create({ data: { fullName: `bench/quiet-${process.pid}`, cloneUrl: "https://example.test/quiet.git" } });
  await createRule(db, { kind: "failed_check", stackId: stack.id, repositoryId: quietRepo.id, job: "deploy-production" });
  const repos = { busy: busyRepo.fullName, quiet: quietRepo.fullName };
  // Runs per unit: the busy failure's firing rules (its own plus any seeded global one) and the
  // 4 quiet failures' (global ones only); every firing rule of the busy failure drops 5 duplicates.
  const busyRules = await matchingRules(db, repos.busy);
  const quietRules = await matchingRules(db, repos.quiet);
  const perUnit = { runs: busyRules + 4 * quietRules, drops: 5 * busyRules };

  const port = await freePort();
  const env = { ...process.env, DATABASE_URL: databaseUrl, GITHUB_WEBHOOK_SECRET: secret, AIRLOCK_BENCH: "1", NODE_ENV: "production" as const, PORT: String(port) };
  log(`starting the web server on :${port} and a worker...`);
  procs.web = start(process.execPath, webServerArgs({ port }), env, "web").pid;
  let warmWorkers = startWorkers(env, 1);
  await waitFor(`http://127.0.0.1:${port}/api/health`);

  log("warming up...");
  for (let i = 0; i < 200; i++) {
    const d = nextFailure(repos.busy);
    await post(port, "/api/webhooks/github", d.event, d.deliveryId, d.body);
    await post(port, "/api/bench/noop", d.event, d.deliveryId, d.body);
  }
  await drain(db, 120_000);
  await stopWorkers(warmWorkers);
  warmWorkers = [];

  // Ingest alone (no worker: deliveries queue up, as when evaluation lags). The two routes
  // alternate in short rounds, so a neighbour's burst on a shared machine hits both.
  log(`bare route and webhook route alternating, ${ROUNDS} rounds of ${SECONDS / ROUNDS} s each, no worker...`);
  const noopRounds: Stats[] = [];
  const readRounds: Stats[] = [];
  const hookRounds: Stats[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    noopRounds.push(await sustained(port, "/api/bench/noop", repos.busy, SECONDS / ROUNDS));
    readRounds.push(await sustained(port, "/api/bench/noop", repos.busy, SECONDS / ROUNDS, true));
    hookRounds.push(await sustained(port, "/api/webhooks/github", repos.busy, SECONDS / ROUNDS));
  }
  const noop = combine(noopRounds);
  const read = combine(readRounds);
  const hook = combine(hookRounds);
  const roundRatios = hookRounds.map((h, i) => h.rate / (noopRounds[i]?.rate ?? 1));
  // The evaluation rate is measured on the storms below, from an empty queue.
  const discarded = await discardBacklog(db);
  const load0 = loadavg();

  const rows: WorkerRow[] = [];
  for (const count of WORKER_COUNTS) rows.push(await workerRow(port, db, env, repos, count, perUnit));

  const ratio = hook.rate / noop.rate;
  const row = (cells: (string | number)[]) => console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 44 : i === 5 ? 28 : 13)).join(""));
  const cpuCell = (c: Cpu) => `${c.web.toFixed(2)} + ${c.database.toFixed(2)} + ${c.worker.toFixed(2)}`;
  console.log(`\nwebhook ingest on the production server: ${CONCURRENCY} keep-alive clients over loopback, ${SECONDS} s per route (bare and webhook alternating in ${ROUNDS} rounds);`);
  console.log(`every delivery a new failed job (verified, recorded, evaluation queued). Load average ${load0.map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} CPUs.`);
  row(["", "deliveries/s", "p50 ms", "p99 ms", "requests", "CPU ms/req web+db+workers", "ratio"]);
  row(["bare route handler (answers 200)", noop.rate.toFixed(0), noop.p50.toFixed(1), noop.p99.toFixed(1), noop.requests, cpuCell(noop.cpu), "1.00"]);
  row(["bare route handler reading the body", read.rate.toFixed(0), read.p50.toFixed(1), read.p99.toFixed(1), read.requests, cpuCell(read.cpu), (read.rate / noop.rate).toFixed(2)]);
  row(["POST /api/webhooks/github, no worker", hook.rate.toFixed(0), hook.p50.toFixed(1), hook.p99.toFixed(1), hook.requests, cpuCell(hook.cpu), ratio.toFixed(2)]);
  for (const r of rows) {
    const b = r.busy;
    row([`  same, ${r.workers} worker${r.workers === 1 ? "" : "s"} evaluating (nice ${WORKER_NICE}, ${BUSY_SECONDS} s)`, b.rate.toFixed(0), b.p50.toFixed(1), b.p99.toFixed(1), b.requests, cpuCell(b.cpu), (b.rate / noop.rate).toFixed(2)]);
  }
  console.log(`ratio per round: ${roundRatios.map((r) => r.toFixed(2)).join(", ")}; CPU per request, bare / webhook (web + db): ${((noop.cpu.web + noop.cpu.database) / Math.max(hook.cpu.web + hook.cpu.database, 1e-9)).toFixed(2)}`);
  console.log(`targets (no worker): ratio >= ${TARGET_RATIO}, p99 < ${TARGET_P99_MS} ms; statuses ${JSON.stringify(hook.statuses)}; ${discarded} queued deliveries of these rounds discarded unevaluated`);

  const sends = UNITS * SENDS_PER_UNIT;
  console.log(`\nRedelivery storm per row: ${UNITS} units of ${SENDS_PER_UNIT} sends (a failure that fires ${busyRules} rule(s) sent 5x under one delivery id and under 5 more ids; 4 failures`);
  console.log(`no rule of their repository matches, ${quietRules} global rule(s) each), ${sends} sends, ${UNITS * 10} deliveries, posted through the route with no worker running; its jobs held until N worker`);
  console.log(`processes (graphile-worker, nice ${WORKER_NICE}) are up and warm (30 deliveries each), then released to all at once. Load average now ${loadavg().map((l) => l.toFixed(1)).join(" ")}.`);
  const wrow = (cells: (string | number)[]) => console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 9 : i === 3 ? 18 : i === 6 ? 17 : 14)).join(""));
  wrow(["workers", "deliveries/s", "seconds", "jobs (largest)", "worker CPU s", "PostgreSQL s", "CPU split", "dedupe"]);
  for (const r of rows) {
    wrow([
      r.workers,
      r.rate.toFixed(1),
      r.seconds.toFixed(1),
      `${r.jobs.jobs} (${r.jobs.sizes.slice(0, 3).join(", ")})`,
      r.workerCpu.toFixed(4),
      r.databaseCpu.toFixed(4),
      r.split.map((x) => `${Math.round(100 * x)}%`).join("/"),
      r.verdict.exact ? `exact: ${r.verdict.summary}` : `NOT EXACT: ${r.verdict.problems.join("; ")}`,
    ]);
  }
  console.log(`(CPU seconds per delivery: all worker processes together, and PostgreSQL, from /proc. CPU split: each worker's share. Expected per row: ${UNITS * perUnit.runs} runs,`);
  console.log(` ${UNITS * perUnit.drops} drops, ${UNITS * 5} triage decisions, write-backs none (the runs are suggestions: nothing executes).)`);
  const exact = rows.every((r) => r.verdict.exact);
  console.log(`dedupe ${exact ? "exact in every row" : "NOT EXACT"}`);
  const pass = ratio >= TARGET_RATIO && hook.p99 < TARGET_P99_MS && exact;
  console.log(pass ? "\nPASS" : "\nFAIL");
  await db.$disconnect();
  return pass;
}


main()
  .then(async (pass) => {
    agent.destroy();
    await stopAll();
    process.exit(pass ? 0 : 1);
  })
  .catch(async (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    agent.destroy();
    await stopAll();
    process.exit(1);
  });
