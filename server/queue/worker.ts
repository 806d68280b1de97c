// The worker process: `tsx server/queue/worker.ts`. Runs graphile-worker on Airlock's
// PostgreSQL (LISTEN/NOTIFY pickup), the task registry, the attempt runner, the cancel
// listener and the recovery loop. Any number may run against one database.
import { EventEmitter } from "node:events";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { existsSync } from "node:fs";
import pg from "pg";
import { Logger, parseCronItems, run, type Runner } from "graphile-worker";
import { getDb } from "@/server/db";
import { RUN_CANCEL_CHANNEL } from "@/server/domain/run-engine/cancel";
import { env, requireDatabaseUrl } from "@/server/env";
import { enqueue } from "./enqueue";
import { workerApplicationName } from "./recovery";
import { reapOrphanedSandboxes } from "@/server/execution/sandbox/lifetime";
import { upgradeShippedPolicies } from "@/server/domain/policy/store";
import { probeSandbox } from "@/server/execution/sandbox/probe";
import { createKubeLauncher } from "@/server/execution/kubernetes/kubernetes";
import { AttemptRegistry } from "@/server/execution/runner/attempt-registry";
import { createTaskList } from "./tasks";
import { REAP_JOB_KEY } from "./tasks/reap-attempts";
import type { WorkerContext, WorkerSettings } from "./worker-context";
import { logEvent } from "@/server/observability/log";
import { initProcessMetrics } from "@/server/observability/metrics";
import { serveWorkerMetrics } from "@/server/observability/metrics-server";
import { startTracing } from "@/server/observability/tracing";

/** The worker's own lines: JSON, like every server log line (server/observability/log.ts). */
const log = (line: string) => logEvent("process", {}, { process: "worker" }, line);

export function workerSettings(): WorkerSettings {
  const toolchain = resolve("node_modules");
  return {
    dataDir: resolve(env.AIRLOCK_DATA_DIR),
    heartbeatIntervalMs: env.AIRLOCK_HEARTBEAT_INTERVAL_MS,
    eventBatchMs: env.AIRLOCK_EVENT_BATCH_MS,
    keepFailedWorkspaceMs: env.AIRLOCK_WORKSPACE_KEEP_FAILED_HOURS * 3600_000,
    scriptedSpeed: env.AIRLOCK_SCRIPTED_SPEED,
    approvalTtlMs: env.AIRLOCK_APPROVAL_TTL_HOURS * 3600_000,
    kube: env.AIRLOCK_K8S_CONFIG ? createKubeLauncher({ config: env.AIRLOCK_K8S_CONFIG, image: env.AIRLOCK_K8S_AGENT_IMAGE }) : null,
    maxAttempts: env.AIRLOCK_WORKER_CONCURRENCY,
    leaseMs: env.AIRLOCK_ATTEMPT_LEASE_MS,
    reapIntervalMs: env.AIRLOCK_REAP_INTERVAL_MS,
    ciTimeoutMs: env.AIRLOCK_CI_TIMEOUT_MS,
    toolchainNodeModules: existsSync(join(toolchain, ".bin")) ? toolchain : null,
  };
}

export type StartWorkerOptions = {
  /** Overrides (tests run a worker in-process with their own data dir and timings). */
  settings?: Partial<WorkerSettings>;
  /** Prepare the demo at start (default: AIRLOCK_DEMO_BOOTSTRAP). */
  demo?: boolean;
  /** Exit the process when stopped (the entry point), or just resolve (tests). */
  exitOnStop?: boolean;
};

export async function startWorker(opts: StartWorkerOptions = {}) {
  const connectionString = requireDatabaseUrl();
  initProcessMetrics();
  const tracing = startTracing("airlock-worker", env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const db = getDb();
  const settings = { ...workerSettings(), ...opts.settings };
  const registry = new AttemptRegistry();
  // Whatever a dead worker's sandboxes left running ends here, before this one starts any.
  const reaped = await reapOrphanedSandboxes(join(settings.dataDir, "sandboxes"));
  if (reaped > 0) log(`ended ${reaped} sandbox(es) a previous worker left running`);
  // A shipped policy nobody edited follows this build's text (a rule the product adds reaches it).
  const { upgraded } = await upgradeShippedPolicies(db);
  if (upgraded.length > 0) log(`upgraded the shipped policies ${upgraded.join(", ")} to this build's version`);
  const sandbox = await probeSandbox();
  log(sandbox.available ? `sandbox: ${sandbox.version}` : `${sandbox.reason}: untrusted attempts are refused until it is installed`);
  let poolId = "starting";
  const ctx: WorkerContext = {
    db,
    settings,
    registry,
    workerRef: () => `${hostname()}/${process.pid}/${poolId}`,
    inflight: new Set(),
    claiming: { count: 0 },
    log,
  };

  // One connection for this process's liveness (its application_name names the worker pool, see
  // recovery.ts) and for cancel notifications: a cancelled run's session stops within a moment.
  const liveness = new pg.Client({ connectionString, application_name: "airlock-worker:starting" });
  await liveness.connect();
  liveness.on("notification", (msg) => {
    if (msg.channel !== RUN_CANCEL_CHANNEL || !msg.payload) return;
    if (registry.stop(msg.payload, "cancel", "the run was cancelled")) log(`run ${msg.payload}: cancel received, stopping its session`);
  });
  liveness.on("error", (err) => {
    // Without this connection other workers would take our jobs: stop, and let the supervisor restart us.
    log(`liveness connection lost (${err.message}); shutting down`);
    void stop(1);
  });
  await liveness.query(`LISTEN ${RUN_CANCEL_CHANNEL}`);

  const events = new EventEmitter();
  events.on("pool:create", ({ workerPool }: { workerPool: { id: string } }) => {
    poolId = workerPool.id;
    liveness.query(`SET application_name = '${workerApplicationName(workerPool.id).replaceAll("'", "")}'`).catch(() => undefined);
  });

  const pgPool = new pg.Pool({ connectionString, max: 8 });
  // An idle client's error (the server restarted) must not crash the process; the pool replaces it.
  pgPool.on("error", (err) => log(`database pool: ${err.message}`));
  pgPool.on("connect", (client) => client.on("error", (err) => log(`database client: ${err.message}`)));
  const runner: Runner = await run({
    pgPool,
    concurrency: 4,
    pollInterval: env.AIRLOCK_WORKER_POLL_MS,
    noHandleSignals: true,
    events: events as never,
    taskList: createTaskList(ctx),
    // Backstop for the reaper's self-rescheduling chain (crontab text cannot name "attempts.reap").
    // flaky.tick reads each flaky-scan rule's own schedule (rules change at runtime; a crontab does not).
    parsedCronItems: parseCronItems([
      { task: "attempts.reap", identifier: "attempts-reap", match: "* * * * *", options: { backfillPeriod: 0, maxAttempts: 3 } },
      { task: "flaky.tick", identifier: "flaky-tick", match: "* * * * *", options: { backfillPeriod: 0, maxAttempts: 3 } },
    ]),
    logger: new Logger((scope) => (level, message) => {
      if (level === "error" || level === "warning") logEvent("process", { jobName: scope.taskIdentifier }, { process: "worker", source: "graphile-worker" }, message, level === "error" ? "error" : "warn");
    }),
  });

  // Start-up sweep: recover what a previous worker left (lost attempts, queued runs with no job).
  await enqueue(db, "attempts.reap", {}, { jobKey: REAP_JOB_KEY, maxAttempts: 3 });
  if (opts.demo ?? env.AIRLOCK_DEMO_BOOTSTRAP) await enqueue(db, "demo.bootstrap", {}, { jobKey: "demo.bootstrap", maxAttempts: 3 });
  const metricsServer =
    env.AIRLOCK_WORKER_METRICS_PORT === undefined ? null : await serveWorkerMetrics({ port: env.AIRLOCK_WORKER_METRICS_PORT, token: env.AIRLOCK_METRICS_TOKEN, nodeEnv: env.NODE_ENV });
  if (metricsServer) log(`metrics on http://127.0.0.1:${metricsServer.port}/metrics`);
  log(`ready (pid ${process.pid}, ${settings.maxAttempts} attempts at once, lease ${settings.leaseMs} ms)`);

  let stopping: Promise<void> | undefined;
  /** Graceful stop: no new jobs, running attempts released (lost + retried), connections closed. */
  function stop(code = 0): Promise<void> {
    stopping ??= (async () => {
      log("stopping: no new jobs; releasing running attempts");
      await runner.stop().catch(() => undefined);
      registry.stopAll("shutdown", "worker shutdown");
      await Promise.race([Promise.allSettled([...ctx.inflight]), new Promise((r) => setTimeout(r, 15_000))]);
      await liveness.end().catch(() => undefined);
      await pgPool.end().catch(() => undefined);
      metricsServer?.server.close();
      await tracing?.shutdown().catch(() => undefined);
      if (opts.exitOnStop) {
        await db.$disconnect().catch(() => undefined);
        process.exit(code);
      }
    })();
    return stopping;
  }
  return { runner, ctx, stop };
}

// Run when executed directly (tsx server/queue/worker.ts), not when imported by tests.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename ?? "")) {
  startWorker({ exitOnStop: true })
    .then(({ stop }) => {
      for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void stop(0));
    })
    .catch((err: unknown) => {
      log(`failed to start: ${(err as Error).stack ?? String(err)}`);
      process.exit(1);
    });
}
