import { appWebhookSecret, webhookSecretFromSql } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { receiveGithubWebhook } from "@/server/domain/ingest/delivery/receive-github";
import { env } from "@/server/env";
import { observeWebhook } from "@/server/observability/webhook";
import { webhookRecorder, webhookSql } from "./sql-pool";

// GitHub webhooks: verify the signature (GITHUB_WEBHOOK_SECRET or the GitHub App's secret),
// record the delivery with its evaluation job, answer. Evaluation runs in the worker ("delivery.evaluate").
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function POST(request: Request) {
  const sql = webhookSql();
  return observeWebhook({ request, source: "github", sql }, async () => receiveGithubWebhook({
    sql,
    record: (delivery) => webhookRecorder().record(delivery),
    request,
    secret: env.GITHUB_WEBHOOK_SECRET,
    appSecret: await appWebhookSecret(() => webhookSecretFromSql(sql, sealingKey())),
    maxBytes: env.WEBHOOK_MAX_BYTES,
  }));
}
