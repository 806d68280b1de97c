import { z } from "zod";
import { DeliveryOutcome, ForgeKind } from "@/server/db/generated/enums";

// Recorded deliveries as /deliveries lists them (server/domain/deliveries/list.ts).

export const zDeliveryPage = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      deliveryId: z.string(),
      source: z.enum(ForgeKind),
      event: z.string(),
      action: z.string().nullable(),
      outcome: z.enum(DeliveryOutcome),
      detail: z.string().nullable(),
      receivedAt: z.date(),
      processedAt: z.date().nullable(),
      tookMs: z.number().int().nullable(),
      reevaluations: z.number().int(),
      reevaluatedAt: z.date().nullable(),
      repository: z.object({ name: z.string().nullable(), registeredId: z.string().nullable(), disabled: z.boolean() }),
      // The run's status as text: read by raw SQL (`status::text`).
      runs: z.array(z.object({ id: z.string(), number: z.number().int(), status: z.string() })),
      drops: z.array(z.object({ id: z.string(), reason: z.string(), runId: z.string().nullable() })),
      canReevaluate: z.boolean(),
    }),
  ),
  nextCursor: z.string().nullable(),
  canReevaluate: z.boolean(),
});
