import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

// Airlock's Prometheus instruments. Each process (every web process, every worker) keeps its own
// registry and serves it: web at GET /api/metrics, a worker on its loopback listener
// (AIRLOCK_WORKER_METRICS_PORT). Prometheus scrapes each as its own target and sums with
// `sum without (instance)`: counters and histograms are per process by nature (process CPU and
// memory, open SSE sockets, the attempts this worker ran), a restart resets them and `rate()`
// handles the reset. Aggregating through PostgreSQL instead would put a hot upsert on the event
// append path and still could not carry process metrics. Counters count what happened while the
// process ran, so deleting rows never lowers them.
//
// The gauges read at scrape (queued runs, running attempts, pending approvals) are global facts
// from the database, registered by web processes only: aggregate them with `max`, not `sum`.

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const WAIT_SECONDS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600];

function createInstruments(registry: Registry) {
  const registers = [registry];
  return {
    dispatchesQueued: new Counter({ name: "airlock_dispatches_queued_total", help: "Times a run entered the queue (created queued, retried, resumed).", registers }),
    dispatchesFailed: new Counter({ name: "airlock_dispatches_failed_total", help: "Runs that ended failed.", registers }),
    cancellations: new Counter({ name: "airlock_cancellations_total", help: "Runs cancelled.", registers }),
    dedupeDrops: new Counter({
      name: "airlock_dedupe_drops_total",
      help: "Triggers dropped because a run already holds their dedupe key, by trigger kind.",
      labelNames: ["trigger_kind"] as const,
      registers,
    }),
    writeBacks: new Counter({ name: "airlock_write_backs_total", help: "Write-backs executed, by kind and outcome.", labelNames: ["kind", "outcome"] as const, registers }),
    approvals: new Counter({ name: "airlock_approvals_total", help: "Approval requests decided, by outcome (approved, rejected, expired, stale).", labelNames: ["outcome"] as const, registers }),
    modelTokens: new Counter({ name: "airlock_model_tokens_total", help: "Model tokens of finished attempts, by model and direction.", labelNames: ["model", "direction"] as const, registers }),
    modelCost: new Counter({ name: "airlock_model_cost_usd_total", help: "Estimated model cost (USD) of finished attempts, by model.", labelNames: ["model"] as const, registers }),
    subagentsStarted: new Counter({ name: "airlock_subagents_started_total", help: "Subagents started by agents.", registers }),
    queueWait: new Histogram({ name: "airlock_queue_wait_seconds", help: "From an attempt being queued to a worker taking it.", buckets: SECONDS, registers }),
    attemptDuration: new Histogram({
      name: "airlock_attempt_duration_seconds",
      help: "From an attempt's start to its end, by outcome and runner pool.",
      labelNames: ["outcome", "pool"] as const,
      buckets: SECONDS,
      registers,
    }),
    approvalWait: new Histogram({ name: "airlock_approval_wait_seconds", help: "From an approval request to its decision, by outcome.", labelNames: ["outcome"] as const, buckets: WAIT_SECONDS, registers }),
    webhookHandling: new Histogram({ name: "airlock_webhook_handling_seconds", help: "Time to answer a webhook delivery, by HTTP status.", labelNames: ["status"] as const, buckets: SECONDS, registers }),
    sseAppendToSend: new Histogram({ name: "airlock_sse_append_to_send_seconds", help: "From a run event's append to its write on a live SSE stream.", buckets: SECONDS, registers }),
    sseStreamsOpen: new Gauge({ name: "airlock_sse_streams_open", help: "SSE streams this process holds open, by endpoint.", labelNames: ["stream"] as const, registers }),
  };
}

export type Instruments = ReturnType<typeof createInstruments>;
type MetricsState = { registry: Registry; instruments: Instruments; started: boolean; dbGauges: boolean };

// One registry per process, on globalThis: Next's server bundle and the tsx-loaded web server are
// separate module graphs in one process (and dev reloads modules), yet must count into one place.
const KEY = Symbol.for("airlock.metrics");
const slot = globalThis as unknown as { [KEY]?: MetricsState };

function state(): MetricsState {
  if (!slot[KEY]) {
    const registry = new Registry();
    slot[KEY] = { registry, instruments: createInstruments(registry), started: false, dbGauges: false };
  }
  return slot[KEY];
}

/** The process's instruments (created on first use). */
export const metrics = (): Instruments => state().instruments;

export const metricsRegistry = (): Registry => state().registry;

/**
 * Starts the default process metrics, once. `dbGauges` registers the gauges read from the
 * database at scrape (web processes). Which process a series came from is the scrape target's
 * own `job`/`instance` labels, set in the Prometheus config (README "Observability").
 */
export function initProcessMetrics(opts: { dbGauges?: (registry: Registry) => void } = {}): Registry {
  const s = state();
  if (!s.started) {
    s.started = true;
    collectDefaultMetrics({ register: s.registry, prefix: "airlock_" });
  }
  if (opts.dbGauges && !s.dbGauges) {
    s.dbGauges = true;
    opts.dbGauges(s.registry);
  }
  return s.registry;
}

/** Seconds between two instants, never negative (clocks of two hosts may disagree slightly). */
export const secondsBetween = (from: Date | number, to: Date | number) => Math.max(0, (Number(to) - Number(from)) / 1000);
