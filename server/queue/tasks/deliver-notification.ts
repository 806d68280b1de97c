import { publicOrigin, webhookFromEnv, type NotificationWebhook } from "@/server/domain/notifications/config";
import { deliverNotification } from "@/server/domain/notifications/deliver";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/**
 * "notification.deliver": one webhook attempt. A failed attempt within the bound throws, so
 * graphile-worker retries it with its backoff; at the bound the notification is marked failed
 * and the job ends (logged as an error, not retried again).
 */
export async function deliverNotificationTask(
  payload: unknown,
  ctx: Pick<WorkerContext, "db" | "log">,
  config: { webhook: NotificationWebhook | null; origin: string } = { webhook: webhookFromEnv(), origin: publicOrigin() },
): Promise<void> {
  const { notificationId } = parseJobPayload("notification.deliver", payload);
  const result = await deliverNotification({ db: ctx.db, notificationId, webhook: config.webhook, origin: config.origin });
  switch (result.outcome) {
    case "delivered":
      ctx.log(`notification ${notificationId}: webhook delivered (attempt ${result.attempts})`);
      return;
    case "skipped":
      return;
    case "retry":
      throw new Error(`notification ${notificationId}: webhook attempt ${result.attempts} failed (${result.error}); will retry`);
    case "failed":
      ctx.log(`error: notification ${notificationId}: webhook failed after ${result.attempts} attempts (${result.error}); giving up`);
      return;
  }
}
