import type { Db } from "@/server/db";
import { signBody } from "@/server/domain/ingest/signature";
import { DELIVERY_MAX_ATTEMPTS, type NotificationWebhook } from "./config";

export type DeliveryResult =
  | { outcome: "delivered"; attempts: number }
  /** Already delivered, failed for good, or gone: nothing is sent again. */
  | { outcome: "skipped"; reason: string }
  /** This attempt failed and the bound allows another: the job should throw so the queue retries. */
  | { outcome: "retry"; attempts: number; error: string }
  | { outcome: "failed"; attempts: number; error: string };

/** The JSON a receiver gets. Built from stored (already redacted) fields only: no secret goes in. */
export type NotificationWebhookPayload = {
  id: string;
  kind: string;
  title: string;
  body: string;
  href: string;
  repository: { id: string; fullName: string };
  runId: string | null;
  pullRequestId: string | null;
  createdAt: string;
};

/**
 * One delivery attempt of a notification's webhook. The attempt is counted (committed) before
 * the POST, so a worker that dies mid-request still burns it and the bound holds. A 2xx marks
 * the notification delivered, after which every later run of the job sends nothing; between a
 * 2xx and that mark a crash can repeat the POST, which is why each carries
 * `X-Airlock-Delivery: <notification id>` for the receiver to drop repeats.
 */
export async function deliverNotification(opts: {
  db: Db;
  notificationId: string;
  webhook: NotificationWebhook | null;
  /** The console's public origin: hrefs are sent absolute. */
  origin: string;
  maxAttempts?: number;
  timeoutMs?: number;
  now?: () => Date;
}): Promise<DeliveryResult> {
  const { db, notificationId } = opts;
  const maxAttempts = opts.maxAttempts ?? DELIVERY_MAX_ATTEMPTS;
  const now = opts.now ?? (() => new Date());
  if (!opts.webhook) {
    // The URL was removed after the notification was made: stop trying, and say why.
    const n = await db.notification.updateMany({
      where: { id: notificationId, deliveryStatus: "pending" },
      data: { deliveryStatus: "none", deliveryError: "no webhook URL is configured" },
    });
    return { outcome: "skipped", reason: n.count ? "no webhook URL is configured" : "not pending" };
  }

  const [claimed] = await db.notification.updateManyAndReturn({
    where: { id: notificationId, deliveryStatus: "pending" },
    data: { deliveryAttempts: { increment: 1 } },
    include: { repository: { select: { id: true, fullName: true } } },
  });
  if (!claimed) return { outcome: "skipped", reason: "not pending (delivered, failed or gone)" };
  const attempts = claimed.deliveryAttempts;
  if (attempts > maxAttempts) {
    return finishFailed(db, notificationId, attempts - 1, `gave up after ${maxAttempts} attempts`);
  }

  const payload: NotificationWebhookPayload = {
    id: claimed.id,
    kind: claimed.kind,
    title: claimed.title,
    body: claimed.body,
    href: `${opts.origin.replace(/\/+$/, "")}${claimed.href}`,
    repository: claimed.repository,
    runId: claimed.runId,
    pullRequestId: claimed.pullRequestId,
    createdAt: claimed.createdAt.toISOString(),
  };
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Airlock-Notifications",
    "x-airlock-delivery": claimed.id,
    "x-airlock-event": claimed.kind,
  };
  if (opts.webhook.secret) headers["x-airlock-signature-256"] = signBody(opts.webhook.secret, body);

  const error = await post(opts.webhook.url, headers, body, opts.timeoutMs ?? 10_000);
  if (error === null) {
    await db.notification.updateMany({
      where: { id: notificationId, deliveryStatus: "pending" },
      data: { deliveryStatus: "delivered", deliveredAt: now(), deliveryError: null },
    });
    return { outcome: "delivered", attempts };
  }
  if (attempts >= maxAttempts) return finishFailed(db, notificationId, attempts, error);
  await db.notification.updateMany({ where: { id: notificationId, deliveryStatus: "pending" }, data: { deliveryError: error } });
  return { outcome: "retry", attempts, error };
}

async function finishFailed(db: Db, id: string, attempts: number, error: string): Promise<DeliveryResult> {
  await db.notification.updateMany({ where: { id, deliveryStatus: "pending" }, data: { deliveryStatus: "failed", deliveryError: error } });
  return { outcome: "failed", attempts, error };
}

/**
 * POSTs and returns null on a 2xx, or a short reason. The reason never quotes the URL (it may
 * hold a token, as chat webhooks do) nor the receiver's body; redirects are not followed.
 */
async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => undefined);
    return res.ok ? null : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`.slice(0, 200);
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
    return `request failed: ${e.cause?.code ?? e.name}`;
  }
}
