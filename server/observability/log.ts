import { trace } from "@opentelemetry/api";
import pino, { type DestinationStream, type Logger } from "pino";
import { env } from "@/server/env";

// Airlock's structured log: one JSON object per line on stdout, for whatever ships logs
// (journald, a Kubernetes log agent, Loki). Every line carries `kind` (what decision or call it
// records, see LogKind) and the ids to join it with a run: runId, attemptId, deliveryId, and the
// active trace's traceId/spanId, so a log line opens the trace and the run page.
//
// Never pass a secret's value: grants are logged by name, and `redact` masks the fields a careless
// call might still hand over.

/** The log kinds the spec lists (seed 002, "Observability requirements"), plus Airlock's own. */
export type LogKind =
  | "adapter.gateway"
  | "runner.scheduling"
  | "service_account.selection"
  | "rbac.admission"
  | "grant.decision"
  | "context.redaction"
  | "ci.correlation"
  | "mcp.health"
  | "process"
  | "error";

export type LogIds = { runId?: string | null; attemptId?: string | null; deliveryId?: string | null; jobName?: string };

function traceIds(): { traceId?: string; spanId?: string } {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
}

export function createLogger(destination?: DestinationStream, level: string = env.AIRLOCK_LOG_LEVEL): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: traceIds,
      redact: { paths: ["*.password", "*.token", "*.secret", "*.authorization", "*.value"], censor: "[redacted]" },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

const KEY = Symbol.for("airlock.logger");
const slot = globalThis as unknown as { [KEY]?: Logger };

/** The process's logger (one across Next's bundle and the tsx-loaded server). */
export function logger(): Logger {
  slot[KEY] ??= createLogger();
  return slot[KEY];
}

/** Replaces the process's logger (tests read lines from their own stream). Returns the old one. */
export function setLogger(next: Logger): Logger {
  const prev = logger();
  slot[KEY] = next;
  return prev;
}

/** One line of a given kind with its ids; undefined/null ids are left out. */
export function logEvent(kind: LogKind, ids: LogIds, fields: Record<string, unknown>, msg: string, level: "info" | "warn" | "error" | "debug" = "info") {
  const clean: Record<string, unknown> = { kind };
  for (const [k, v] of Object.entries(ids)) if (v !== undefined && v !== null) clean[k] = v;
  logger()[level]({ ...clean, ...fields }, msg);
}

/** An unexpected error, with its stack, as one line. */
export function logError(where: string, err: unknown, ids: LogIds = {}) {
  logEvent("error", ids, { where, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, `${where} failed`, "error");
}
