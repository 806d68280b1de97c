import { SpanKind } from "@opentelemetry/api";
import { metrics, secondsBetween } from "./metrics";
import { currentTraceParent, inSpan, tracingEnabled } from "./tracing";
import { logError, logEvent } from "./log";

type Sql = { query: (text: string, values: readonly unknown[]) => Promise<unknown> };

/**
 * Wraps a webhook route's handling: the handling-time histogram, the correlation log line, and
 * the root span of the delivery's trace. With tracing on, the delivery row keeps the span's
 * traceparent so its evaluation (a job the ingest statement adds) continues the same trace.
 */
export function observeWebhook(opts: { request: Request; source: string; sql: Sql }, handle: () => Promise<Response>): Promise<Response> {
  const started = Date.now();
  const deliveryId = opts.request.headers.get("x-github-delivery");
  const event = opts.request.headers.get("x-github-event");
  return inSpan(
    `webhook ${opts.source}`,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": "POST", "airlock.delivery.id": deliveryId ?? "", "airlock.webhook.event": event ?? "" } },
    async (span) => {
      const res = await handle();
      span.setAttribute("http.response.status_code", res.status);
      metrics().webhookHandling.observe({ status: String(res.status) }, secondsBetween(started, Date.now()));
      logEvent("ci.correlation", { deliveryId }, { source: opts.source, event, status: res.status }, `webhook ${event ?? "?"} delivery ${deliveryId ?? "(no id)"}: ${res.status}`);
      const traceParent = currentTraceParent();
      if (tracingEnabled() && traceParent && deliveryId && res.status < 300) {
        await opts.sql
          .query(`UPDATE "WebhookDelivery" SET "traceParent" = $1 WHERE "deliveryId" = $2 AND "traceParent" IS NULL`, [traceParent, deliveryId])
          .catch((err: unknown) => logError("store the delivery's traceparent", err, { deliveryId }));
      }
      return res;
    },
  );
}
