import { receiveGithubWebhook } from "@/server/domain/ingest/delivery/receive-github";
import { env } from "@/server/env";
import { observeWebhook } from "@/server/observability/webhook";
import { webhookRecorder, webhookSql } from "./sql-pool";

// GitHub webhooks: verify the signature, record the delivery with its evaluation job, answer.
// Evaluation runs in the worker ("delivery.evaluate").
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function POST(request: Request) {
  return observeWebhook({ request, source: "github", sql: webhookSql() }, () => receiveGithubWebhook({
    sql: webhookSql(),
    record: (delivery) => webhookRecorder().record(delivery),
    request,
    secret: env.GITHUB_WEBHOOK_SECRET,
    maxBytes: env.WEBHOOK_MAX_BYTES,
  }));
}
