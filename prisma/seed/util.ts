import { randomBytes } from "node:crypto";
import { sha256 } from "@/server/lib/digest";

// Small helpers shared by the seed modules: ids and signatures derived from stable labels (so a
// re-seed computes the same values), and the clock arithmetic every timestamp is built from.

/** A cuid-shaped id (25 chars, lowercase base36), for rows inserted with createMany. */
export function newId(): string {
  let id = `c${Date.now().toString(36)}`;
  for (const b of randomBytes(24)) {
    if (id.length >= 25) break;
    id += (b % 36).toString(36);
  }
  return id;
}

/** A stable UUID (version-4 shaped) from a label, e.g. for X-GitHub-Delivery ids. */
export function stableUuid(label: string): string {
  const h = sha256(`uuid:${label}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** `sha256:<hex>` of some bytes named by a label (CI artifacts we reference but do not store). */
export const labelDigest = (label: string) => `sha256:${sha256(`artifact:${label}`)}`;

/** `sha256:<hex>` of a text's UTF-8 bytes, and its size: how stored artifacts are digested. */
export function contentDigest(content: string): { digest: string; sizeBytes: number } {
  return { digest: `sha256:${sha256(content)}`, sizeBytes: Buffer.byteLength(content, "utf8") };
}

/**
 * A failure signature: a normalised hash of the failing test names and the first
 * error line, stable across runs of the same failure (16 hex digits).
 */
export function failureSignature(parts: { tests: readonly string[]; errorLine: string }): string {
  const normalised = [...parts.tests].sort().join("\n") + "\n" + parts.errorLine.replace(/\d+(\.\d+)?(ms|s)\b/g, "<t>");
  return sha256(normalised).slice(0, 16);
}

export const minutes = (n: number) => n * 60_000;
export const addMs = (d: Date, ms: number) => new Date(d.getTime() + ms);
export const minutesBefore = (d: Date, n: number) => addMs(d, -minutes(n));

/** Claude-style tool-use ids (`toolu_01` + 22 base62 characters). */
export function toolUseId(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let id = "toolu_01";
  for (const b of randomBytes(22)) id += alphabet[b % alphabet.length];
  return id;
}

/** Numbers a file excerpt the way Claude Code's Read tool prints it. */
export function numbered(text: string, firstLine = 1): string {
  return text
    .split("\n")
    .map((line, i) => `${String(firstLine + i).padStart(6)}\t${line}`)
    .join("\n");
}

/** Finds a row by key or fails loudly: seed data must be internally consistent. */
export function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`seed: missing ${what}`);
  return value;
}
