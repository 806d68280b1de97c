// What a local-forge delivery stores: the normalised event plus what GitHub payloads never carry
// (the failed job's log, the changed files, CI artifacts), so evaluation needs no forge calls.
import { z } from "zod";
import { zCiEvent } from "@/server/domain/ci-events/ci-event";

/** Longest log kept on a delivery; a longer one keeps its end, where failures are reported. */
export const MAX_LOCAL_LOG_CHARS = 4 * 1024 * 1024;

export const zLocalArtifact = z.object({
  name: z.string().min(1),
  type: z.string().min(1),
  url: z.string().nullable().optional(),
  digest: z.string().nullable().optional(),
  sizeBytes: z.number().int().nonnegative().nullable().optional(),
  retainUntil: z.string().nullable().optional(),
  /** A small text artifact's content (a checksum file), up to 64 KiB: release keys read its entries. */
  content: z.string().max(64 * 1024).nullable().optional(),
});
export type LocalArtifact = z.infer<typeof zLocalArtifact>;

export const zLocalExtras = z.object({
  log: z.string().nullable().default(null),
  changedFiles: z.array(z.string()).nullable().default(null),
  artifacts: z.array(zLocalArtifact).default([]),
});
export type LocalExtras = z.infer<typeof zLocalExtras>;

export const zLocalDeliveryPayload = zLocalExtras.extend({
  ciEvent: zCiEvent,
  /** The forge's own payload, kept for reference only. */
  raw: z.unknown().optional(),
});
export type LocalDeliveryPayload = z.infer<typeof zLocalDeliveryPayload>;

export function boundLog(log: string | null | undefined): string | null {
  if (log === null || log === undefined) return null;
  return log.length <= MAX_LOCAL_LOG_CHARS ? log : log.slice(log.length - MAX_LOCAL_LOG_CHARS);
}
