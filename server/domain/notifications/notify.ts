import { transaction, type Db, type NotificationKind, type Tx } from "@/server/db";
import { redactText } from "@/server/domain/context/redaction/redact";
import { enqueue } from "@/server/queue/enqueue";
import { DELIVERY_MAX_ATTEMPTS, deliveryJobKey, webhookFromEnv, type NotificationWebhook } from "./config";
import { zNotifyInput } from "./schemas";

export type NotifyResult = { id: string; created: boolean };
export type NotifyInput = {
  kind: NotificationKind;
  repositoryId: string;
  title: string;
  body: string;
  href: string;
  runId?: string | null;
  pullRequestId?: string | null;
  dedupeKey: string;
};

/**
 * Records one in-app notification per `dedupeKey` and, when a webhook is configured, queues its
 * delivery in the same transaction. A retried or raced call (same key) returns the existing row
 * with `created: false` and queues nothing: the insert is `ON CONFLICT ("dedupeKey") DO NOTHING`,
 * so concurrent callers wait on the unique index instead of both inserting.
 *
 * Called inside the caller's transaction (a Tx), the notification and its job exist only if that
 * transaction commits. Title and body are redacted: callers may quote logs or review text.
 */
export async function notify(
  db: Db | Tx,
  input: NotifyInput,
  opts: { webhook?: NotificationWebhook | null } = {},
): Promise<NotifyResult> {
  const data = zNotifyInput.parse(input);
  const webhook = opts.webhook === undefined ? webhookFromEnv() : opts.webhook;
  return transaction(
    db,
    "notify",
    async (tx) => {
      const created = await tx.notification.createManyAndReturn({
        data: {
          kind: data.kind,
          repositoryId: data.repositoryId,
          title: redactText(data.title).text,
          body: redactText(data.body).text,
          href: data.href,
          runId: data.runId ?? null,
          pullRequestId: data.pullRequestId ?? null,
          dedupeKey: data.dedupeKey,
          deliveryStatus: webhook ? "pending" : "none",
        },
        skipDuplicates: true,
        select: { id: true },
      });
      const row = created[0];
      if (!row) {
        // The key was taken: by a committed row (visible now, READ COMMITTED) or by this very transaction.
        const existing = await tx.notification.findUniqueOrThrow({ where: { dedupeKey: data.dedupeKey }, select: { id: true } });
        return { id: existing.id, created: false };
      }
      if (webhook) {
        await enqueue(tx, "notification.deliver", { notificationId: row.id }, { jobKey: deliveryJobKey(row.id), maxAttempts: DELIVERY_MAX_ATTEMPTS });
      }
      return { id: row.id, created: true };
    },
    // A burst of escalations may outnumber the pool: wait for a connection rather than fail.
    { maxWait: 30_000 },
  );
}
