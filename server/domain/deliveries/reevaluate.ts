import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { recordAudit } from "../audit";
import { requireAdmin } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { reevaluable } from "./list";

// "Re-evaluate" on the deliveries page, after a rule changed or the repository was registered:
// the delivery goes back to waiting and its `delivery.evaluate` job is queued again, in one
// transaction. Idempotent where it matters: the dedupe keys stop a second run for a trigger that
// already has one (it is recorded as a duplicate), and two clicks at once re-queue it once.

export async function reevaluateDelivery(opts: { db: Db; actor: UserActor; deliveryId: string; now?: Date }) {
  requireAdmin(opts.actor, "re-evaluate a delivery");
  const now = opts.now ?? new Date();
  return transaction(opts.db, "reevaluateDelivery", async (tx) => {
    const row = await tx.webhookDelivery.findUnique({ where: { deliveryId: opts.deliveryId }, select: { outcome: true, detail: true } });
    if (!row) throw new AppError("NOT_FOUND", "No such delivery.");
    if (!reevaluable(row.outcome)) {
      throw new AppError("CONFLICT", row.outcome === "received" ? "This delivery is waiting to be evaluated already." : "This delivery's payload failed validation; evaluating it again cannot change that.", { reason: `not_reevaluable_${row.outcome}` });
    }
    // Only a processed delivery is reset: a concurrent click finds it waiting and is refused.
    const { count } = await tx.webhookDelivery.updateMany({
      where: { deliveryId: opts.deliveryId, processedAt: { not: null } },
      data: { outcome: "received", detail: null, processedAt: null, reevaluations: { increment: 1 }, reevaluatedAt: now },
    });
    if (count !== 1) throw new AppError("CONFLICT", "This delivery is waiting to be evaluated already.", { reason: "not_reevaluable_received" });
    await enqueue(tx, "delivery.evaluate", { deliveryId: opts.deliveryId });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "delivery.reevaluate", objectType: "WebhookDelivery", objectId: opts.deliveryId, detail: { previousOutcome: row.outcome, previousDetail: row.detail?.slice(0, 500) ?? null } });
    return { deliveryId: opts.deliveryId, queued: true };
  });
}
