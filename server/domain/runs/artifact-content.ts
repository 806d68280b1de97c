import type { Prisma } from "@/server/db";
import { contentDigest } from "@/server/lib/digest";
import { boundText, cleanText } from "@/server/lib/text-boundary";
import { type KnownSecret, redactText, type RedactionEntry } from "../context/redaction/redact";
import type { ArtifactKind } from "@/server/db/generated/enums";

export type ArtifactToStore = {
  kind: ArtifactKind;
  name: string;
  mediaType: string;
  /** sha256:<hex> of the bytes, computed by the worker from the file it stored. */
  digest: string;
  sizeBytes: number;
  /** Text up to 1 MB is kept in the row; anything else by location. */
  content: string | null;
  location: string | null;
  retainUntil: Date | null;
};

// What is stored of an artifact: every text artifact of every run is redacted before it reaches a
// column. A diagnosis or report is the redacted text (its digest and size are of what is stored).
// A patch is never altered silently, since a changed patch would no longer apply or would push
// something other than what was approved: its redacted text is what every screen shows, the
// findings are recorded, its digest stays the digest of the original bytes (the only bytes that
// could be pushed), and those bytes are withheld in a bytea column only the write-back executor
// reads, after an admin overrode push protection (see approvals/push-protection.ts).

export type ProtectedArtifact = ArtifactToStore & {
  secretFindings: RedactionEntry[] | null;
  withheldContent: Uint8Array<ArrayBuffer> | null;
};

export function protectArtifact(artifact: ArtifactToStore, secrets: readonly KnownSecret[]): ProtectedArtifact {
  const name = redactText(boundText(artifact.name, 500), { secrets }).text;
  const base = { ...artifact, name, secretFindings: null, withheldContent: null };
  if (artifact.content === null) return base;
  const original = cleanText(artifact.content);
  const { text, report } = redactText(original, { secrets });
  if (report.status === "clean") return { ...base, content: original };
  if (artifact.kind === "patch" && original === artifact.content) {
    return { ...base, content: text, secretFindings: report.entries, withheldContent: new Uint8Array(Buffer.from(original, "utf8")) };
  }
  return { ...base, content: text, digest: contentDigest(text), sizeBytes: Buffer.byteLength(text, "utf8"), secretFindings: report.entries };
}

/** "github_token ×2, token_shape:anthropic ×1": what was masked, for a person. */
export function describeFindings(entries: readonly RedactionEntry[]): string {
  return entries.map((e) => `${e.kind}${e.name ? `:${e.name}` : ""} ×${e.count}`).join(", ");
}

export const findingsOf = (value: Prisma.JsonValue | null | undefined): RedactionEntry[] =>
  Array.isArray(value) ? (value as RedactionEntry[]).filter((e) => e && typeof e === "object" && typeof e.kind === "string") : [];
