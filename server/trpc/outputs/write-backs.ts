import { z } from "zod";
import { WriteBackKind, WriteBackOutcome } from "@/server/db/generated/enums";
import { storedJson } from "./stored-json";

// What the run page's write-back requests answer, and a write-back as the run and approval pages
// show it (its stored `target` JSON stays on the server: the pages read the presented record).

export const zWriteBackRequested = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("approval"), approvalId: z.string(), reason: z.string() }),
  z.object({ kind: z.literal("direct"), writeBackId: z.string(), reason: z.string() }),
]);

export const zWriteBackRow = z.object({
  id: z.string(),
  runId: z.string(),
  kind: z.enum(WriteBackKind),
  outcome: z.enum(WriteBackOutcome),
  approvalId: z.string().nullable(),
  attemptId: z.string().nullable(),
  triggerRuleId: z.string().nullable(),
  actor: z.string(),
  approvedBy: z.string().nullable(),
  artifactDigest: z.string().nullable(),
  stackDigest: z.string(),
  contextDigest: z.string(),
  promptHash: z.string(),
  externalRef: z.string().nullable(),
  error: z.string().nullable(),
  idempotencyKey: z.string(),
  createdAt: z.date(),
  completedAt: z.date().nullable(),
});

export const zRetriedWriteBack = z.object({ writeBackId: z.string() });

/** A write-back on the run page: of its stored target, only the exception the change gate applied (an exempt write-back names it). */
export const zRunWriteBack = zWriteBackRow.extend({ target: storedJson(z.object({ exception: z.string().nullish() })) });
