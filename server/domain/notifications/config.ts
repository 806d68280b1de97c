import { env } from "@/server/env";

/** Where notifications are POSTed, and the HMAC key that signs them. */
export type NotificationWebhook = { url: string; secret: string | null };

/** The installation's webhook (AIRLOCK_NOTIFICATION_WEBHOOK_URL / _SECRET), or null: in-app only. */
export function webhookFromEnv(): NotificationWebhook | null {
  const url = env.AIRLOCK_NOTIFICATION_WEBHOOK_URL;
  return url ? { url, secret: env.AIRLOCK_NOTIFICATION_WEBHOOK_SECRET ?? null } : null;
}

/** The console's public origin, for absolute links in webhook payloads (same default as auth). */
export function publicOrigin(): string {
  return (env.AIRLOCK_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
}

/** The job's bound and ours: an unreachable receiver is tried this many times, then marked failed. */
export const DELIVERY_MAX_ATTEMPTS = 3;

export const deliveryJobKey = (notificationId: string) => `notification.deliver:${notificationId}`;
