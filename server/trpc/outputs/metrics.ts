import { z } from "zod";
import { DeliveryOutcome } from "@/server/db/generated/enums";
import { zRunCounts } from "./runs";

// The /metrics figures (server/domain/metrics.ts).

const zQuantiles = z.object({ count: z.number().int(), p50: z.number().nullable(), p95: z.number().nullable(), sum: z.number() });

export const zMetricsSnapshot = z.object({
  runsByStatus: zRunCounts,
  dispatchWaitSeconds: zQuantiles,
  runDurationSeconds: zQuantiles,
  approvalWaitSeconds: zQuantiles,
  approvalsPending: z.number().int(),
  costUsd: z.number(),
  tokens: z.object({ input: z.number().int(), output: z.number().int() }),
  subagentsStarted: z.number().int(),
  writeBacks: z.object({ pending: z.number().int(), succeeded: z.number().int(), failed: z.number().int() }),
  dedupeDrops: z.number().int(),
  // Only the outcomes the window saw.
  deliveries: z.partialRecord(z.enum(DeliveryOutcome), z.number().int()),
  windowHours: z.number().int(),
});

export const zMetricsSeries = z.object({
  bucket: z.enum(["hour", "day"]),
  points: z.array(
    z.object({
      at: z.string(),
      runsCreated: z.number().int(),
      runsFailed: z.number().int(),
      writeBacksSucceeded: z.number().int(),
      writeBacksFailed: z.number().int(),
      queueWaitP50: z.number().nullable(),
      costUsd: z.number(),
    }),
  ),
});
