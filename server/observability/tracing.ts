import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { PrismaInstrumentation } from "@prisma/instrumentation";
import type { RunEventInput } from "@/server/domain/events/catalogue";

// OpenTelemetry traces: on when OTEL_EXPORTER_OTLP_ENDPOINT is set (exported over OTLP/HTTP),
// off otherwise (the API's no-op tracer: nothing is recorded, no lookups are made).
//
// One trace follows a delivery: the webhook request -> "delivery.evaluate" -> "run.dispatch" ->
// the attempt's agent session (gen_ai `invoke_agent`) and each tool call (`execute_tool`) ->
// the approval decision -> "writeback.execute". Across graphile-worker jobs the context travels
// as a W3C `traceparent` in the job payload (server/queue/enqueue.ts); where a job is added
// without one (the webhook's own insert, an approval in the web process), the worker picks up the
// context stored on the delivery or the run (`traceParent`, stamped by the first append).

const TRACER = "airlock";
const propagator = new W3CTraceContextPropagator();

type TracingState = { sdk: NodeSDK; processor: BatchSpanProcessor } | null;
const KEY = Symbol.for("airlock.tracing");
const slot = globalThis as unknown as { [KEY]?: TracingState };

export const tracingEnabled = () => Boolean(slot[KEY]);
export const tracer = () => trace.getTracer(TRACER);

/** Starts the SDK once per process when `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT) is set. */
export function startTracing(serviceName: string, endpoint: string | undefined): { flush: () => Promise<void>; shutdown: () => Promise<void> } | null {
  if (!endpoint) return null;
  if (!slot[KEY]) {
    const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, "")}/v1/traces` });
    const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 });
    const sdk = new NodeSDK({ serviceName, spanProcessors: [processor], instrumentations: [new PrismaInstrumentation()], textMapPropagator: propagator });
    sdk.start();
    slot[KEY] = { sdk, processor };
  }
  const s = slot[KEY]!;
  return {
    flush: () => s.processor.forceFlush(),
    shutdown: async () => {
      await s.sdk.shutdown();
      slot[KEY] = null;
    },
  };
}

/** The active context as a W3C traceparent, or null (no active span, tracing off). */
export function currentTraceParent(ctx: Context = context.active()): string | null {
  if (!tracingEnabled() || !trace.getSpan(ctx)?.spanContext().traceId) return null;
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, { set: (c, k, v) => (c[k] = v) });
  return carrier.traceparent ?? null;
}

/** A context whose parent is the given traceparent (or the root context). */
export function contextFrom(traceParent: string | null | undefined): Context {
  if (!traceParent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, { get: (c, k) => c[k], keys: (c) => Object.keys(c) });
}

/** Runs `fn` in a span that ends with it (error status when it throws). */
export async function inSpan<T>(
  name: string,
  opts: { parent?: Context; kind?: SpanKind; attributes?: Record<string, string | number | boolean> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

// ---- spans from run events (gen_ai semantic conventions)
// https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-agent-spans/ and gen-ai-spans/
// An attempt's session is one `invoke_agent` span; each model call (one assistant message) a
// `chat <model>` child over the call's own interval, with its usage; each tool call an
// `execute_tool` child, timed by the call's own start and the result's duration. The spans live in the process that runs the
// attempt (its events are appended there), keyed by run and attempt.

const MAX_OPEN = 10_000;
const sessions = new Map<string, Span>();
const toolCalls = new Map<string, Span>();
const attemptKey = (runId: string, attemptNumber: number) => `${runId}#${attemptNumber}`;
const latestSession = new Map<string, string>();

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "lost"]);

function bounded<V>(map: Map<string, V>, key: string, value: V) {
  if (map.size >= MAX_OPEN) map.delete(map.keys().next().value ?? "");
  map.set(key, value);
}

/** Events just appended to one run (and attempt), as observers receive them. */
export type AppendedEvents = { runId: string; attemptId: string | null; events: readonly RunEventInput[] };

export function observeEventSpans({ runId, attemptId, events }: AppendedEvents): void {
  if (!tracingEnabled()) return;
  for (const e of events) {
    if (e.type === "status" && e.payload.scope === "attempt") {
      const key = attemptKey(runId, e.payload.attemptNumber);
      if (e.payload.to === "running" && !sessions.has(key)) {
        const span = tracer().startSpan(
          "invoke_agent",
          {
            kind: SpanKind.INTERNAL,
            attributes: { "gen_ai.operation.name": "invoke_agent", "airlock.run.id": runId, "airlock.attempt.number": e.payload.attemptNumber, ...(attemptId ? { "airlock.attempt.id": attemptId } : {}) },
          },
          context.active(),
        );
        bounded(sessions, key, span);
        latestSession.set(runId, key);
      } else if (TERMINAL.has(e.payload.to)) {
        const span = sessions.get(key);
        if (span) {
          span.setAttribute("airlock.attempt.outcome", e.payload.to);
          if (e.payload.to !== "succeeded") span.setStatus({ code: SpanStatusCode.ERROR, message: e.payload.reason });
          span.end();
          sessions.delete(key);
        }
      }
      continue;
    }
    const sessionKey = latestSession.get(runId);
    const session = sessionKey ? sessions.get(sessionKey) : undefined;
    if (e.type === "cost" && session) {
      session.setAttributes({ "gen_ai.usage.input_tokens": e.payload.inputTokens, "gen_ai.usage.output_tokens": e.payload.outputTokens });
      if (e.payload.model) session.setAttribute("gen_ai.request.model", e.payload.model);
    } else if (e.type === "model_call") {
      const parent = session ? trace.setSpan(context.active(), session) : context.active();
      const p = e.payload;
      const startTime = new Date(p.startedAt);
      const span = tracer().startSpan(
        `chat ${p.model}`,
        {
          kind: SpanKind.CLIENT,
          startTime,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": p.model,
            "gen_ai.response.model": p.model,
            "gen_ai.response.id": p.messageId,
            // The prompt's tokens, cached ones included; the cached parts also on their own.
            "gen_ai.usage.input_tokens": p.inputTokens + p.cacheReadTokens + p.cacheWriteTokens,
            "gen_ai.usage.output_tokens": p.outputTokens,
            "gen_ai.usage.cache_read.input_tokens": p.cacheReadTokens,
            "gen_ai.usage.cache_creation.input_tokens": p.cacheWriteTokens,
            ...(p.subagentId ? { "airlock.subagent.id": p.subagentId } : {}),
          },
        },
        parent,
      );
      span.end(new Date(startTime.getTime() + p.durationMs));
    } else if (e.type === "tool_call") {
      const parent = session ? trace.setSpan(context.active(), session) : context.active();
      const span = tracer().startSpan(
        `execute_tool ${e.payload.name}`,
        { kind: SpanKind.INTERNAL, startTime: new Date(e.payload.startedAt), attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.payload.name, "gen_ai.tool.call.id": e.payload.id } },
        parent,
      );
      bounded(toolCalls, `${runId}:${e.payload.id}`, span);
    } else if (e.type === "tool_result") {
      const key = `${runId}:${e.payload.toolCallId}`;
      const span = toolCalls.get(key);
      if (!span) continue;
      if (e.payload.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool reported an error" });
      span.end();
      toolCalls.delete(key);
    }
  }
}


/** The wait for a person's decision, as a span over [requested, decided] in the run's trace. */
export function observeApprovalSpan(a: { approvalId: string; runId: string; action: string; outcome: string; createdAt: Date; decidedAt: Date; traceParent: string | null }) {
  if (!tracingEnabled() || !a.traceParent) return;
  const span = tracer().startSpan(
    `approval ${a.outcome}`,
    { startTime: a.createdAt, attributes: { "airlock.approval.id": a.approvalId, "airlock.run.id": a.runId, "airlock.approval.action": a.action, "airlock.approval.outcome": a.outcome } },
    contextFrom(a.traceParent),
  );
  span.end(a.decidedAt);
}
