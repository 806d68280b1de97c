// Redaction of secrets from logs, transcripts, artifacts and context bundles. Returns the
// redacted text and what was redacted (kind, the granted secret's or the rule's name, count,
// reason): never a value.
//
// Guarantees, each tested:
// - a secret is found where a person would see it: on the stored text, on what a terminal shows
//   of it (escape sequences and control characters gone) and on what rendered markdown shows
//   (emphasis gone), each mapped back to the stored characters (visible.ts, hits.ts);
// - linear time in the input (see patterns.ts for why each pattern is linear; literal secrets use
//   indexOf; PEM blocks are scanned by hand);
// - the number of lines never changes, so excerpt line numbers stay true;
// - idempotent: redacting redacted text changes nothing and reports nothing.
import { findHits, mergeHits, type PreparedSecret } from "./hits";
import { KIND_REASONS, marker, type SecretKind } from "./patterns";
import type { RedactionReport } from "./report";

export type { RedactionEntry, RedactionReport } from "./report";
export { mayHaveSecretAssignment, mayHaveUrlCredentials } from "./hits";
export { SECRETLINT_PRESET } from "./secretlint";

export type KnownSecret = { name: string; value: string };
export type RedactOptions = { secrets?: readonly KnownSecret[] };

/** Shorter granted values are not replaced (they would shred ordinary text); a warning says so. */
export const MIN_SECRET_LENGTH = 4;

export function redactText(text: string, options: RedactOptions = {}): { text: string; report: RedactionReport } {
  const tally = new Tally();
  const known = preparedSecrets(options.secrets ?? []);
  for (const warning of known.warnings) tally.warn(warning);
  const hits = mergeHits(findHits(text, known.prepared));
  if (hits.length === 0) return { text, report: tally.report() };
  const parts: string[] = [];
  let copied = 0;
  for (const h of hits) {
    parts.push(text.slice(copied, h.start), marker(h.kind, h.kind === "known_secret" || h.kind === "token_shape" ? h.label : undefined));
    // A multi-line secret keeps its line breaks, so line numbers do not move.
    parts.push("\n".repeat(countNewlines(text, h.start, h.end)));
    copied = h.end;
    tally.add(h.kind, 1, h.kind === "known_secret" || h.kind === "token_shape" ? h.name : undefined);
  }
  parts.push(text.slice(copied));
  return { text: parts.join(""), report: tally.report() };
}

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = s.indexOf("\n", from); i !== -1 && i < to; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Redact every string inside a JSON-like value, object keys included (a granted value or a token
 * used as a key is as visible as one used as a value). Two keys that redact to the same text are
 * kept apart. Expects a value already through the text boundary (bounded depth).
 */
export function redactDeep<T>(value: T, options: RedactOptions = {}): { value: T; report: RedactionReport } {
  // Most values hold nothing to redact. One pass over all their strings joined by newlines finds
  // everything the per-string pass would (no pattern crosses a line break, and a string's start
  // and end look like a line's), so when it finds nothing the value is returned as it is: a
  // fraction of the cost of redacting a few hundred short strings one by one.
  const strings: string[] = [];
  collectStrings(value, strings);
  if (strings.length > 1) {
    const probe = redactText(strings.join("\n"), options);
    if (probe.report.entries.length === 0) return { value, report: probe.report };
  }
  const reports: RedactionReport[] = [];
  const text = (s: string) => {
    const r = redactText(s, options);
    if (r.report.entries.length > 0 || r.report.warnings.length > 0) reports.push(r.report);
    return r.text;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) {
        let key = text(k);
        while (Object.hasOwn(out, key)) key = `${key}′`;
        Object.defineProperty(out, key, { value: walk(inner), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return v;
  };
  return { value: walk(value) as T, report: mergeReports(reports) };
}

function collectStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const item of v) collectStrings(item, out);
  else if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, inner] of Object.entries(v)) {
      out.push(k);
      collectStrings(inner, out);
    }
  }
}

export function mergeReports(reports: readonly RedactionReport[]): RedactionReport {
  const tally = new Tally();
  for (const r of reports) {
    for (const e of r.entries) tally.add(e.kind, e.count, e.name ?? undefined);
    for (const w of r.warnings) tally.warn(w);
  }
  return tally.report();
}

// ---------------------------------------------------------------- internals

class Tally {
  private counts = new Map<string, { kind: SecretKind; name: string | null; count: number }>();
  private warnings = new Set<string>();

  add(kind: SecretKind, count: number, name?: string) {
    if (count <= 0) return;
    const key = `${kind}\u0000${name ?? ""}`;
    const entry = this.counts.get(key) ?? { kind, name: name ?? null, count: 0 };
    entry.count += count;
    this.counts.set(key, entry);
  }

  warn(message: string) {
    this.warnings.add(message);
  }

  report(): RedactionReport {
    const entries = [...this.counts.values()]
      .map((e) => ({ ...e, reason: KIND_REASONS[e.kind] }))
      .sort((a, b) => a.kind.localeCompare(b.kind) || (a.name ?? "").localeCompare(b.name ?? ""));
    return { status: entries.length > 0 ? "redacted" : "clean", entries, warnings: [...this.warnings].sort() };
  }
}

// Preparing variants costs more than searching for them in a short string, and redactDeep calls
// redactText once per string with the same secrets array: preparation is cached per array, and
// the cache is checked against the array's current contents, so a mutated array is re-prepared.
type Prepared = { snapshot: KnownSecret[]; prepared: PreparedSecret[]; warnings: string[] };
const preparedCache = new WeakMap<readonly KnownSecret[], Prepared>();

function preparedSecrets(secrets: readonly KnownSecret[]): Prepared {
  const cached = preparedCache.get(secrets);
  if (
    cached &&
    cached.snapshot.length === secrets.length &&
    cached.snapshot.every((s, i) => s.name === secrets[i]?.name && s.value === secrets[i]?.value)
  ) {
    return cached;
  }
  const warnings: string[] = [];
  const entry = { snapshot: secrets.map((s) => ({ ...s })), prepared: knownSecrets(secrets, warnings), warnings };
  preparedCache.set(secrets, entry);
  return entry;
}

/** Each granted value plus the encodings it commonly appears in, longest first. */
function knownSecrets(secrets: readonly KnownSecret[], warnings: string[]): PreparedSecret[] {
  const prepared: PreparedSecret[] = [];
  for (const { name, value } of secrets) {
    const core = value.replace(/\r?\n$/, "");
    if (core.length < MIN_SECRET_LENGTH) {
      if (core.length > 0) warnings.push(`secret ${name} is shorter than ${MIN_SECRET_LENGTH} characters and was not redacted`);
      continue;
    }
    // The encodings a value is commonly echoed in: URL-encoded, JSON-escaped, Base64 (with and
    // without padding, as Basic credentials and Kubernetes secrets print it).
    const base64 = toBase64(core);
    // And as rendered markdown shows it, should the value hold emphasis characters itself.
    const rendered = core.replace(/[*~`]/g, "");
    const variants = new Set([core, encodeURIComponent(core), JSON.stringify(core).slice(1, -1), base64, base64.replace(/=+$/, "")]);
    if (rendered.length >= MIN_SECRET_LENGTH) variants.add(rendered);
    prepared.push({
      name,
      // Secret names go into the marker only when they cannot break its syntax.
      label: /^[A-Za-z0-9_.-]{1,100}$/.test(name) ? name : undefined,
      variants: [...variants].sort((a, b) => b.length - a.length),
    });
  }
  return prepared.sort((a, b) => (b.variants[0]?.length ?? 0) - (a.variants[0]?.length ?? 0));
}

function toBase64(value: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const MARKER = /\[REDACTED:([a-z_]+)(?::([A-Za-z0-9_.-]{1,100}))?\]/g;

/**
 * What was redacted before the text reached us (ingest redacts deliveries before storing them):
 * the markers already in it, tallied like a fresh redaction, so reports stay true downstream.
 */
export function reportFromMarkers(text: string): RedactionReport {
  if (!text.includes("[REDACTED:")) return { status: "clean", entries: [], warnings: [] };
  const tally = new Tally();
  for (const m of text.matchAll(MARKER)) {
    const kind = m[1] as SecretKind;
    if (Object.hasOwn(KIND_REASONS, kind)) tally.add(kind, 1, kind === "known_secret" || kind === "token_shape" ? m[2] : undefined);
  }
  return tally.report();
}
