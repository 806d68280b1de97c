// What redaction reports: kinds and counts (and a granted secret's name), never a value.
import { z } from "zod";
import { KIND_REASONS, type SecretKind } from "./patterns";

export const SECRET_KINDS = Object.keys(KIND_REASONS) as [SecretKind, ...SecretKind[]];

export const zRedactionEntry = z.object({
  kind: z.enum(SECRET_KINDS),
  /** The granted secret's name (known_secret), or the secretlint rule that found it (token_shape). */
  name: z.string().nullable(),
  count: z.number().int().positive(),
  reason: z.string(),
});

export const zRedactionReport = z.object({
  status: z.enum(["clean", "redacted"]),
  entries: z.array(zRedactionEntry),
  warnings: z.array(z.string()),
});
export type RedactionReport = z.infer<typeof zRedactionReport>;
export type RedactionEntry = z.infer<typeof zRedactionEntry>;
