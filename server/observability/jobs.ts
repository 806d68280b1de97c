import { SpanKind } from "@opentelemetry/api";
import type { Task } from "graphile-worker";
import type { Db } from "@/server/db";
import { logEvent } from "./log";
import { contextFrom, inSpan, tracingEnabled } from "./tracing";

// Every graphile-worker job runs in a span that continues the trace it was added in: the
// payload's `traceParent` (enqueue() adds it), or else the trace stored on the delivery or run
// the payload names (jobs added by SQL, or from a process with no active span).

type Payload = { traceParent?: unknown; deliveryId?: unknown; runId?: unknown; approvalId?: unknown; writeBackId?: unknown };
const str = (v: unknown) => (typeof v === "string" && v.length > 0 && v.length <= 200 ? v : null);

async function storedTraceParent(db: Db, p: Payload): Promise<string | null> {
  const deliveryId = str(p.deliveryId);
  if (deliveryId) return (await db.webhookDelivery.findUnique({ where: { deliveryId }, select: { traceParent: true } }))?.traceParent ?? null;
  const runId = str(p.runId);
  if (runId) return (await db.agentDispatchRun.findUnique({ where: { id: runId }, select: { traceParent: true } }))?.traceParent ?? null;
  const approvalId = str(p.approvalId);
  if (approvalId) return (await db.approvalRequest.findUnique({ where: { id: approvalId }, select: { run: { select: { traceParent: true } } } }))?.run.traceParent ?? null;
  const writeBackId = str(p.writeBackId);
  if (writeBackId) return (await db.writeBack.findUnique({ where: { id: writeBackId }, select: { run: { select: { traceParent: true } } } }))?.run.traceParent ?? null;
  return null;
}

/** The task, run in its job's span, with one log line naming the job and its ids. */
export function tracedTask(db: Db, name: string, task: Task): Task {
  return async (payload, helpers) => {
    // A batch (an array payload, "delivery.evaluate") joins the trace of its first entry.
    const p = ((Array.isArray(payload) ? payload[0] : payload) ?? {}) as Payload;
    const ids = { deliveryId: str(p.deliveryId), runId: str(p.runId), jobName: name };
    if (!tracingEnabled()) {
      logEvent("process", ids, { attempt: helpers.job.attempts }, `job ${name} started`, "debug");
      return task(payload, helpers);
    }
    const parent = str(p.traceParent) ?? (await storedTraceParent(db, p).catch(() => null));
    return inSpan(
      name,
      { parent: contextFrom(parent), kind: SpanKind.CONSUMER, attributes: { "messaging.system": "graphile-worker", "messaging.operation.name": "process", "airlock.job.id": String(helpers.job.id) } },
      async () => {
        logEvent("process", ids, { attempt: helpers.job.attempts }, `job ${name} started`, "debug");
        return task(payload, helpers);
      },
    );
  };
}
