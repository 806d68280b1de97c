// The evaluation bench's second part: one storm backlog (duplicates and redelivered jobs
// included) evaluated by the bare handler in the bench's own process, one delivery per job (the
// reference) and in batches, then by 1 real worker process one per job, and by 1, 2 and 4 in
// batches (`node --import tsx server/queue/worker.ts`, graphile-worker sharing the jobs),
// with the rate, the CPU seconds per delivery of the workers and of PostgreSQL (/proc), and the
// storm's dedupe checked in every row.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { PrismaClient } from "@/server/db";
import { failedWorkflowJob, releasePublished } from "@/server/domain/ingest/fixtures/deliveries";
import { parentPid, treeCpuSeconds } from "./proc-cpu";

export type StormRepos = { busy: string; quiet: string };
export type StormRow = {
  label: string;
  deliveries: number;
  seconds: number;
  rate: number;
  workerCpuMs: number;
  databaseCpuMs: number;
  /** Growth of the database (pg_database_size) per delivery: rows, indexes, dead queue rows. */
  bytes: number;
  exact: boolean;
  note: string;
};

// One unit: a failure that dispatches, sent as 5 delivery ids (1 run, 4 duplicate drops; its first
// id's job queued twice, a redelivered job), 3 failures no rule matches, 2 releases no rule wants.
const PER_UNIT = 10;
let serial = 0;

function unit(repos: StormRepos) {
  const n = serial++;
  const sha = randomBytes(20).toString("hex");
  const failure = (repo: string, k: number, headSha: string) =>
    failedWorkflowJob({ repo, runId: 40_000_000 + n * 10 + k, jobId: 50_000_000 + n * 10 + k, jobName: "test", step: "Run npm test", headSha, headBranch: "bench" });
  const busy = failure(repos.busy, 0, sha);
  const rows: { event: string; action: string; payload: object; jobs: number }[] = [];
  for (let i = 0; i < 5; i++) rows.push({ event: busy.event, action: "completed", payload: busy.payload, jobs: i === 0 ? 2 : 1 });
  for (let k = 1; k <= 3; k++) {
    const quiet = failure(repos.quiet, k, randomBytes(20).toString("hex"));
    rows.push({ event: quiet.event, action: "completed", payload: quiet.payload, jobs: 1 });
  }
  for (let k = 0; k < 2; k++) {
    const release = releasePublished({ repo: repos.busy, tag: `v${n}.${k}.0`, targetCommitish: "main" });
    rows.push({ event: release.event, action: "published", payload: release.payload, jobs: 1 });
  }
  return { sha, rows };
}

/**
 * Records `units` storm units and queues their jobs in one transaction; returns what to check.
 * `batch` > 1: the jobs name up to `batch` deliveries each (array payloads, as ingest queues
 * them); 1: one job per delivery (the reference). Redelivered jobs go last, in another batch.
 */
async function recordStorm(db: PrismaClient, repos: StormRepos, units: number, prefix: string, batch: number, queue = true) {
  const shas: string[] = [];
  const deliveries: { deliveryId: string; source: "github"; event: string; action: string; payload: object; outcome: "received"; receivedAt: Date }[] = [];
  const first: string[] = [];
  const again: string[] = [];
  for (let u = 0; u < units; u++) {
    const { sha, rows } = unit(repos);
    shas.push(sha);
    for (const [i, r] of rows.entries()) {
      const deliveryId = `${prefix}-${u}-${i}`;
      deliveries.push({ deliveryId, source: "github", event: r.event, action: r.action, payload: r.payload, outcome: "received", receivedAt: new Date() });
      first.push(deliveryId);
      for (let j = 1; j < r.jobs; j++) again.push(deliveryId);
    }
  }
  const ids = [...first, ...again];
  const jobs: string[][] = [];
  for (let i = 0; i < ids.length; i += batch) jobs.push(ids.slice(i, i + batch));
  const payloads = jobs.map((j) => JSON.stringify(batch === 1 ? { deliveryId: j[0] } : j.map((deliveryId) => ({ deliveryId }))));
  await db.$transaction([
    db.webhookDelivery.createMany({ data: deliveries }),
    db.$executeRaw`SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
      SELECT ROW('delivery.evaluate', p::json, NULL, NULL, 10, NULL, NULL, NULL)::graphile_worker.job_spec
      FROM unnest(${queue ? payloads : []}::text[]) AS p))`,
  ], { timeout: 120_000, maxWait: 120_000 });
  // Without a queue (the bare handler's rows) the jobs are what the caller runs itself.
  return { shas, ids: deliveries.map((d) => d.deliveryId), jobs };
}

async function settled(db: PrismaClient, ids: readonly string[], timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const [row] = await db.$queryRaw<{ open: number; jobs: number }[]>`
      SELECT (SELECT count(*)::int FROM "WebhookDelivery" WHERE "deliveryId" = ANY(${[...ids]}) AND "processedAt" IS NULL) AS open,
             (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate') AS jobs`;
    if (row!.open === 0 && row!.jobs === 0) return;
    if (performance.now() > deadline) throw new Error(`storm not evaluated in time: ${row!.open} deliveries, ${row!.jobs} jobs left`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One run per failure that dispatches, 4 duplicate drops each, never two drops from one delivery. */
async function exact(db: PrismaClient, shas: readonly string[], units: number): Promise<{ exact: boolean; note: string }> {
  const [row] = await db.$queryRaw<{ runs: number; keys: number; drops: number; pairs: number }[]>`
    SELECT (SELECT count(*)::int FROM "AgentDispatchRun" WHERE "headSha" = ANY(${[...shas]})) AS runs,
           (SELECT count(DISTINCT "dedupeKey")::int FROM "AgentDispatchRun" WHERE "headSha" = ANY(${[...shas]})) AS keys,
           (SELECT count(*)::int FROM "TriggerDrop" d JOIN "AgentDispatchRun" r ON r."id" = d."runId" WHERE r."headSha" = ANY(${[...shas]}) AND d."dedupeKey" = r."dedupeKey") AS drops,
           (SELECT count(DISTINCT (d."deliveryId", d."dedupeKey"))::int FROM "TriggerDrop" d JOIN "AgentDispatchRun" r ON r."id" = d."runId" WHERE r."headSha" = ANY(${[...shas]}) AND d."dedupeKey" = r."dedupeKey") AS pairs`;
  const { runs, keys, drops, pairs } = row!;
  const ok = runs === units && keys === units && drops === units * 4 && pairs === drops;
  return { exact: ok, note: `${runs} runs (${units}), ${drops} duplicate drops (${units * 4})${pairs === drops ? "" : `, ${drops - pairs} repeated`}` };
}

async function databaseBytes(db: PrismaClient): Promise<number> {
  const [row] = await db.$queryRaw<{ bytes: bigint }[]>`SELECT pg_database_size(current_database()) AS bytes`;
  return Number(row?.bytes ?? 0);
}

export async function databasePid(db: PrismaClient): Promise<number | undefined> {
  const [row] = await db.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  return row ? parentPid(row.pid) : undefined;
}

/**
 * One real worker process. `node --import tsx` (not the tsx binary, which forks) and `nice`
 * (which execs): the pid is the worker's own, so /proc's CPU time for it is the worker's.
 */
export function startWorker(opts: { env?: NodeJS.ProcessEnv; nice?: number } = {}): ChildProcess {
  const node = [process.execPath, "--import", "tsx", "server/queue/worker.ts"];
  const [cmd, ...args] = opts.nice ? ["nice", "-n", String(opts.nice), ...node] : node;
  return spawn(cmd!, args, {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...(opts.env ?? process.env), AIRLOCK_DATA_DIR: mkdtempSync(join(tmpdir(), "airlock-bench-worker-")), AIRLOCK_DEMO_BOOTSTRAP: "0", AIRLOCK_LOG_LEVEL: "warn" },
  });
}

export async function stopWorker(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

/** Ready: each worker's liveness connection names its graphile-worker pool (queue/recovery.ts). */
export async function ready(db: PrismaClient, count: number) {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const [row] = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'airlock-worker:%' AND application_name <> 'airlock-worker:starting'`;
    if (row!.n >= count) return;
    if (performance.now() > deadline) throw new Error(`only ${row!.n} of ${count} workers started`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function stormRows(opts: {
  db: PrismaClient;
  repos: StormRepos;
  units: number;
  workerCounts: readonly number[];
  /** Deliveries per job (ingest's DELIVERY_BATCH_MAX); each row is also run with 1 for reference. */
  batch: number;
  /** The bare handler, as the bench's first part calls it, on one job's delivery ids. */
  evaluate: (deliveryIds: readonly string[], batched: boolean) => Promise<void>;
}): Promise<StormRow[]> {
  const { db, repos, units } = opts;
  const deliveries = units * PER_UNIT;
  const postgres = await databasePid(db);
  const rows: StormRow[] = [];

  // The bare handler, one job at a time in this process (no queue, no claim): one job per
  // delivery (the reference), then batches.
  for (const batch of [1, opts.batch]) {
    const size0 = await databaseBytes(db);
    const storm = await recordStorm(db, repos, units, `storm-ref-${batch}-${process.pid}`, batch, false);
    const cpu0 = process.cpuUsage();
    const db0 = treeCpuSeconds(postgres);
    const t0 = performance.now();
    for (const ids of storm.jobs) await opts.evaluate(ids, batch > 1);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const check = await exact(db, storm.shas, units);
    const bytes = ((await databaseBytes(db)) - size0) / deliveries;
    const label = `bare handler, ${batch === 1 ? "1 per job" : `${batch} per job`}`;
    rows.push({ label, deliveries, seconds, rate: deliveries / seconds, workerCpuMs: (cpu.user + cpu.system) / 1000 / deliveries, databaseCpuMs: ((treeCpuSeconds(postgres) - db0) * 1000) / deliveries, bytes, ...check });
  }

  const runs = [{ count: 1, batch: 1 }, ...opts.workerCounts.map((count) => ({ count, batch: opts.batch }))];
  for (const { count, batch } of runs) {
    const workers = Array.from({ length: count }, () => startWorker());
    try {
      await ready(db, count);
      // Warm-up: every worker's modules, JIT and caches, on a storm of its own.
      const warm = await recordStorm(db, repos, 5 * count, `storm-warm-${count}-${batch}-${process.pid}`, batch);
      await settled(db, warm.ids, 120_000);
      const cpu0 = workers.map((w) => treeCpuSeconds(w.pid));
      const db0 = treeCpuSeconds(postgres);
      const size0 = await databaseBytes(db);
      const storm = await recordStorm(db, repos, units, `storm-${count}-${batch}-${process.pid}`, batch);
      const t0 = performance.now();
      await settled(db, storm.ids, 600_000);
      const seconds = (performance.now() - t0) / 1000;
      const workerCpu = workers.reduce((sum, w, i) => sum + treeCpuSeconds(w.pid) - cpu0[i]!, 0);
      const databaseCpu = treeCpuSeconds(postgres) - db0;
      const bytes = ((await databaseBytes(db)) - size0) / deliveries;
      const check = await exact(db, storm.shas, units);
      const label = `${count} worker process${count === 1 ? "" : "es"}, ${batch} per job`;
      rows.push({ label, deliveries, seconds, rate: deliveries / seconds, workerCpuMs: (workerCpu * 1000) / deliveries, databaseCpuMs: (databaseCpu * 1000) / deliveries, bytes, ...check });
    } finally {
      await Promise.all(workers.map(stopWorker));
    }
  }
  return rows;
}
