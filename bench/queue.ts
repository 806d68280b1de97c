// Queue and transcript benchmark: `npm run bench -- queue`.
//  1. Dispatch latency: enqueue (commit of the run.dispatch job) -> attempt claimed by an idle
//     in-process worker (LISTEN/NOTIFY pickup, admission, pool lock), -> agent session started
//     (workspace worktree + adapter; in the sandbox: bubblewrap's init running, watched and
//     recorded), and -> the agent's first event stored, p50/p99 over sequential runs, with the
//     bubblewrap sandbox and without it (a trusted pool an admin let run unsandboxed),
//     alternating run by run so both see the same machine.
//  1b. The claim alone (claimNextAttempt called directly): p50/p99, and the SQL statements it
//     sends in all and inside its transaction (the part that holds the run and pool locks),
//     counted at the pg driver, and the CPU time this process spent on it: figures that, unlike
//     wall-clock milliseconds, barely move with the machine's load.
//  2. Sustained event appends through the runner's path (fenced batches: run-row lock, fence
//     check, gap-free seq, one NOTIFY per batch), for one run and for 50 runs at once, with every
//     run's seq verified gap-free afterwards.
// Starts its own throwaway PostgreSQL through scripts/with-db.mjs; bounded to about a minute.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";

const TARGET_P50_MS = 50;
const TARGET_SANDBOX_ADDED_MS = 100;
const TARGET_EVENTS_PER_SECOND = 5_000;
const DISPATCH_SAMPLES = 60;
const APPEND_SECONDS = 4;
const BATCH = 100;
const CONCURRENT_RUNS = 50;

if (!process.env.DATABASE_URL) {
  // Re-run under a throwaway, migrated PostgreSQL (the server modules read DATABASE_URL at import).
  const r = spawnSync(process.execPath, ["scripts/with-db.mjs", "--", process.execPath, "--import", "tsx", "bench/queue.ts"], {
    stdio: "inherit",
    env: { ...process.env, BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "bench-secret-not-for-production-000" },
  });
  process.exit(r.status ?? 1);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const fmt = (n: number) => n.toFixed(1);

async function main() {
  const { getDb } = await import("@/server/db");
  const { RUN_EVENTS_CHANNEL } = await import("@/server/domain/events/append");
  const { appendAttemptEvents } = await import("@/server/domain/runs/attempt-fence");
  const { enqueueDispatch } = await import("@/server/domain/runs/attempts");
  const fixtures = await import("@/server/queue/testing/fixtures");
  const { startWorker } = await import("@/server/queue/worker");
  const db = getDb();

  // A maintainer for admission's role check (no password needed: nobody signs in here).
  const maintainer = { user: await db.user.create({ data: { id: randomUUID(), email: "bench@airlock.local", name: "Bench" } }) };
  const local = await fixtures.createLocalRepository({ files: { "README.md": "bench\n" } });
  await db.membership.create({ data: { userId: maintainer.user.id, repositoryId: local.repository.id, role: "maintainer" } });
  // Trusted, and allowed to run unsandboxed: the baseline of the sandbox's cost.
  await fixtures.createPool({ concurrency: 100, allowUnsandboxed: true });
  const hello = 'process.stdout.write(JSON.stringify({ type: "message", payload: { role: "assistant", text: "hi" } }) + "\\n")';
  const quick = await fixtures.createStack(
    fixtures.scriptedSpec({ adapter: { kind: "command", command: ["node", "-e", hello], env: [], outputFormat: "airlock" } }),
  );
  const worker = await startWorker({ settings: { dataDir: local.dataDir, keepFailedWorkspaceMs: 0 }, demo: false });

  // ------------------------------------------------ 1. dispatch latency
  // The claim transaction's events NOTIFY at its commit: their arrival is "attempt claimed".
  const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await listener.connect();
  const firstNotice = new Map<string, number>();
  listener.on("notification", (msg) => {
    const runId = (JSON.parse(msg.payload ?? "{}") as { runId?: string }).runId;
    if (runId && !firstNotice.has(runId)) firstNotice.set(runId, Date.now());
  });
  await listener.query(`LISTEN ${RUN_EVENTS_CHANNEL}`);
  const toClaim: number[] = [];
  type Variant = "sandbox" | "none";
  const toSession: Record<Variant, number[]> = { sandbox: [], none: [] };
  const toFirstEvent: Record<Variant, number[]> = { sandbox: [], none: [] };
  for (let i = 0; i < 2 * DISPATCH_SAMPLES + 10; i++) {
    const variant: Variant = i % 2 === 0 ? "sandbox" : "none";
    // Without a working sandbox, admission runs the trusted pool unsandboxed (the admin's setting).
    worker.ctx.settings.sandbox = variant === "none" ? { available: false, reason: "bench: the unsandboxed baseline" } : undefined;
    const run = await fixtures.createExecRun({ repositoryId: local.repository.id, stack: quick, sha: local.sha, actorUserId: maintainer.user.id });
    // Start each sample with an idle worker (the previous attempt's cleanup finished).
    while (worker.ctx.inflight.size > 0) await Promise.allSettled([...worker.ctx.inflight]);
    firstNotice.delete(run.id);
    const t0 = Date.now();
    await enqueueDispatch(db, run.id);
    let attempt = null;
    while (!attempt) {
      attempt = await db.dispatchAttempt.findFirst({ where: { runId: run.id, status: { in: ["succeeded", "failed"] } } });
      if (!attempt) await new Promise((r) => setTimeout(r, 5));
    }
    if (attempt.status !== "succeeded") throw new Error(`bench attempt failed: ${attempt.exitReason}`);
    const sandboxed = await db.runEvent.findFirst({ where: { runId: run.id, type: "sandbox" }, orderBy: { seq: "asc" }, select: { payload: true } });
    if (((sandboxed?.payload as { kind?: string } | undefined)?.kind ?? "none") !== (variant === "sandbox" ? "bubblewrap" : "none")) {
      throw new Error(`bench run ${i} did not run ${variant === "sandbox" ? "in the sandbox" : "unsandboxed"}`);
    }
    const first = await db.runEvent.findFirstOrThrow({ where: { runId: run.id, type: "message" }, select: { createdAt: true } });
    if (i < 10) continue; // warm-up
    toClaim.push(firstNotice.get(run.id)! - t0);
    toSession[variant].push(attempt.startedAt!.getTime() - t0);
    toFirstEvent[variant].push(first.createdAt.getTime() - t0);
  }
  await listener.end();
  await worker.stop();
  toClaim.sort((a, b) => a - b);
  for (const v of ["sandbox", "none"] as const) {
    toSession[v].sort((a, b) => a - b);
    toFirstEvent[v].sort((a, b) => a - b);
  }
  const added = pct(toSession.sandbox, 50) - pct(toSession.none, 50);
  const addedFirst = pct(toFirstEvent.sandbox, 50) - pct(toFirstEvent.none, 50);

  // ------------------------------------------------ 1b. the claim alone
  const { claimNextAttempt } = await import("@/server/domain/run-engine/claim-attempt");
  const counted = { total: 0, inTx: 0, open: new WeakSet<object>(), on: false };
  const query = pg.Client.prototype.query;
  // Bench-only instrumentation: count every statement the driver sends while a claim runs.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counted.on) {
      const text = String(typeof args[0] === "string" ? args[0] : (args[0] as { text?: string } | null)?.text ?? "").trim().toUpperCase();
      counted.total++;
      if (text.startsWith("BEGIN")) counted.open.add(this);
      if (counted.open.has(this)) counted.inTx++;
      if (text.startsWith("COMMIT") || text.startsWith("ROLLBACK")) counted.open.delete(this);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const claimMs: number[] = [];
  const claimCpuMs: number[] = [];
  const statements: { total: number; inTx: number }[] = [];
  for (let i = 0; i < DISPATCH_SAMPLES + 5; i++) {
    const run = await fixtures.createExecRun({ repositoryId: local.repository.id, stack: quick, sha: local.sha, actorUserId: maintainer.user.id });
    Object.assign(counted, { total: 0, inTx: 0, on: true });
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const claimed = await claimNextAttempt({ db, runId: run.id, workerRef: "bench", kubernetesAvailable: false });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    counted.on = false;
    if (claimed.kind !== "started") throw new Error(`bench claim ${claimed.kind}: ${claimed.reason}`);
    // Free the pool slot again (nothing runs the attempt).
    await db.dispatchAttempt.update({ where: { id: claimed.attempt.id }, data: { status: "succeeded", finishedAt: new Date() } });
    if (i < 5) continue;
    claimMs.push(ms);
    claimCpuMs.push((cpu.user + cpu.system) / 1000);
    statements.push({ total: counted.total, inTx: counted.inTx });
  }
  pg.Client.prototype.query = query;
  claimMs.sort((a, b) => a - b);
  claimCpuMs.sort((a, b) => a - b);
  const perClaim = statements[0]!;
  if (statements.some((s) => s.total !== perClaim.total || s.inTx !== perClaim.inTx)) throw new Error("claims sent different statement counts");

  // ------------------------------------------------ 2. event appends
  async function runningAttempts(n: number) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const run = await fixtures.createExecRun({ repositoryId: local.repository.id, stack: quick, sha: local.sha });
      await db.agentDispatchRun.update({ where: { id: run.id }, data: { status: "running" } });
      const a = await db.dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "running", fencingToken: 1, heartbeatAt: new Date() } });
      out.push({ runId: run.id, attemptId: a.id, fencingToken: 1 });
    }
    return out;
  }
  const batch = (k: number) =>
    Array.from({ length: BATCH }, (_, j) => ({ type: "log" as const, payload: { stream: "stdout" as const, text: `line ${k}.${j} ${"x".repeat(80)}` } }));
  // One process's database pool has 10 connections: 50 runs' writers share them, as 50
  // attempts on a few workers would (more waiting transactions would only time out).
  let slots = 10;
  const waiters: (() => void)[] = [];
  const acquire = () => (slots > 0 ? (slots--, Promise.resolve()) : new Promise<void>((r) => waiters.push(r)));
  const release = () => (waiters.length > 0 ? waiters.shift()!() : slots++);
  async function appendFor(fences: { runId: string; attemptId: string; fencingToken: number }[]) {
    let events = 0;
    const deadline = performance.now() + APPEND_SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      fences.map(async (fence) => {
        for (let k = 0; performance.now() < deadline; k++) {
          await acquire();
          try {
            await appendAttemptEvents({ db, fence, events: batch(k) });
          } finally {
            release();
          }
          events += BATCH;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    for (const f of fences) {
      const rows = await db.runEvent.findMany({ where: { runId: f.runId }, select: { seq: true }, orderBy: { seq: "asc" } });
      if (rows.some((r, i) => r.seq !== i + 1)) throw new Error(`seq gap in run ${f.runId}`);
      const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: f.runId }, select: { lastEventSeq: true } });
      if (run.lastEventSeq !== rows.length) throw new Error(`lastEventSeq mismatch in run ${f.runId}`);
    }
    return { events, perSecond: events / seconds };
  }
  const one = await appendFor(await runningAttempts(1));
  const many = await appendFor(await runningAttempts(CONCURRENT_RUNS));

  const row = (name: string, value: string, target: string, ok: boolean) => `  ${name.padEnd(44)} ${value.padStart(14)}   ${target.padEnd(12)} ${ok ? "ok" : "MISSED"}`;
  console.log(
    [
      "",
      `Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} cores`,
      `Queue benchmark (${DISPATCH_SAMPLES} sequential dispatches; appends in batches of ${BATCH} for ${APPEND_SECONDS} s)`,
      row("enqueue -> attempt claimed (admitted), p50", `${fmt(pct(toClaim, 50))} ms`, `< ${TARGET_P50_MS} ms`, pct(toClaim, 50) < TARGET_P50_MS),
      row("enqueue -> attempt claimed (admitted), p99", `${fmt(pct(toClaim, 99))} ms`, "", true),
      row("enqueue -> session started, unsandboxed, p50", `${fmt(pct(toSession.none, 50))} ms`, "", true),
      row("enqueue -> session started, bubblewrap, p50", `${fmt(pct(toSession.sandbox, 50))} ms`, "", true),
      row("  added by the sandbox at p50", `${fmt(added)} ms`, `< ${TARGET_SANDBOX_ADDED_MS} ms`, added < TARGET_SANDBOX_ADDED_MS),
      row("enqueue -> session started, unsandboxed, p99", `${fmt(pct(toSession.none, 99))} ms`, "", true),
      row("enqueue -> session started, bubblewrap, p99", `${fmt(pct(toSession.sandbox, 99))} ms`, "", true),
      row("enqueue -> agent's first event, unsandboxed, p50", `${fmt(pct(toFirstEvent.none, 50))} ms`, "", true),
      row("enqueue -> agent's first event, bubblewrap, p50", `${fmt(pct(toFirstEvent.sandbox, 50))} ms`, "", true),
      row("  added by the sandbox at p50", `${fmt(addedFirst)} ms`, `< ${TARGET_SANDBOX_ADDED_MS} ms`, addedFirst < TARGET_SANDBOX_ADDED_MS),
      row("claim alone (admission, pool lock), p50", `${fmt(pct(claimMs, 50))} ms`, "", true),
      row("claim alone, p99", `${fmt(pct(claimMs, 99))} ms`, "", true),
      row("claim alone: this process's CPU time, p50", `${fmt(pct(claimCpuMs, 50))} ms`, "", true),
      row("claim: SQL statements (in its transaction)", `${perClaim.total} (${perClaim.inTx})`, "", true),
      row("event appends, 1 run", `${Math.round(one.perSecond)} /s`, "", true),
      row(`event appends, ${CONCURRENT_RUNS} runs at once (seq gap-free)`, `${Math.round(many.perSecond)} /s`, `>= ${TARGET_EVENTS_PER_SECOND}/s`, many.perSecond >= TARGET_EVENTS_PER_SECOND),
      "",
    ].join("\n"),
  );
  await rm(local.dataDir, { recursive: true, force: true });
  await db.$disconnect();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
