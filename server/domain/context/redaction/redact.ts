// Redaction of secrets from logs and context bundles. Returns the redacted text and what was
// redacted (kind, secret name for granted secrets, count, reason): never a value.
//
// Guarantees, each tested:
// - linear time in the input (see patterns.ts for why each pattern is linear; literal secrets use
//   indexOf; PEM blocks are scanned by hand);
// - the number of lines never changes, so excerpt line numbers stay true;
// - idempotent: redacting redacted text changes nothing and reports nothing.
import {
  ASSIGNMENT_NAME,
  ASSIGNMENT_VALUE,
  KIND_REASONS,
  TOKEN_PATTERNS,
  isPlaceholder,
  isSecretName,
  isSettingNumber,
  marker,
  type SecretKind,
} from "./patterns";
import { redactPrivateKeys } from "./private-keys";
import type { RedactionReport } from "./report";

export type { RedactionReport } from "./report";

export type KnownSecret = { name: string; value: string };
export type RedactOptions = { secrets?: readonly KnownSecret[] };

/** Shorter granted values are not replaced (they would shred ordinary text); a warning says so. */
export const MIN_SECRET_LENGTH = 4;

export function redactText(text: string, options: RedactOptions = {}): { text: string; report: RedactionReport } {
  const tally = new Tally();
  let out = text;
  const known = preparedSecrets(options.secrets ?? []);
  for (const warning of known.warnings) tally.warn(warning);
  for (const secret of known.prepared) {
    out = replaceLiteral(out, secret.variants, marker("known_secret", secret.label), (n) =>
      tally.add("known_secret", n, secret.name),
    );
  }
  const keys = redactPrivateKeys(out);
  out = keys.text;
  tally.add("private_key", keys.count);
  for (const { kind, pattern, replace } of TOKEN_PATTERNS) {
    if (!quickCheck(kind, out)) continue;
    out = out.replace(pattern, (match: string, ...rest: unknown[]) => {
      // replace() passes the groups, then the offset and the whole input.
      const groups = rest.slice(0, -2).map((g) => (typeof g === "string" ? g : ""));
      const replaced = replace(match, groups);
      if (replaced === null) return match;
      tally.add(kind, 1);
      return replaced;
    });
  }
  out = redactAssignments(out, tally);
  return { text: out, report: tally.report() };
}

/** Redact every string inside a JSON-like value (object keys are left as they are). */
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
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      const r = redactText(v, options);
      if (r.report.entries.length > 0 || r.report.warnings.length > 0) reports.push(r.report);
      return r.text;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]));
    }
    return v;
  };
  return { value: walk(value) as T, report: mergeReports(reports) };
}

function collectStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const item of v) collectStrings(item, out);
  else if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    for (const inner of Object.values(v)) collectStrings(inner, out);
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

type PreparedSecret = { name: string; label: string | undefined; variants: string[] };

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
    const variants = new Set([core, encodeURIComponent(core), JSON.stringify(core).slice(1, -1), base64, base64.replace(/=+$/, "")]);
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
    if (Object.hasOwn(KIND_REASONS, kind)) tally.add(kind, 1, kind === "known_secret" ? m[2] : undefined);
  }
  return tally.report();
}

function replaceLiteral(text: string, needles: readonly string[], replacement: string, count: (n: number) => void): string {
  let out = text;
  for (const needle of needles) {
    if (!out.includes(needle)) continue;
    const parts = out.split(needle);
    count(parts.length - 1);
    // A multi-line secret keeps its line breaks, so line numbers do not move.
    const breaks = "\n".repeat(needle.split("\n").length - 1);
    out = parts.join(replacement + breaks);
  }
  return out;
}

/** Skip a whole pass when its anchor text cannot occur (most log chunks have no tokens at all). */
function quickCheck(kind: SecretKind, text: string): boolean {
  switch (kind) {
    case "github_token":
      return text.includes("gh") || text.includes("github_pat_");
    case "slack_token":
      return text.includes("xox");
    case "slack_webhook":
      return text.includes("hooks.slack.com");
    case "jwt":
      return text.includes("eyJ");
    case "url_credentials":
      return mayHaveUrlCredentials(text);
    default:
      return true;
  }
}

/**
 * Whether url_credentials could match: some "://" is followed, before any whitespace, "/" or
 * "@", by a ":" (after at least one character) and then an "@". Necessary for the pattern, and
 * a single indexOf scan where the pattern would try every word in the text.
 */
export function mayHaveUrlCredentials(text: string): boolean {
  for (let at = text.indexOf("://"); at !== -1; at = text.indexOf("://", at + 3)) {
    let colon = false;
    for (let i = at + 3; i < text.length && i < at + 3 + 514; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x40 /* @ */) {
        if (colon) return true;
        break;
      }
      if (c === 0x2f /* / */ || c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c > 0x7f) {
        // Non-ASCII may be whitespace to the pattern's \s: stay conservative.
        if (c > 0x7f && c !== 0xa0) continue;
        break;
      }
      if (c === 0x3a /* : */ && i > at + 3) colon = true;
    }
  }
  return false;
}

// A secret-ish assignment name ends (ignoring "-", "_" and "." anywhere in it, as isSecretName
// does) with one of these words, right before the separator. Necessary for isSecretName, and
// one linear pass that rejects most text, where the assignment pass visits every "word:".
const SEP = "[-_.]*";
const spaced = (word: string) => word.split("").join(SEP);
const SECRET_NAME_END = new RegExp(
  `(?:${["pass", "word", "wd", "phrase", "secret", "token", "key", "credential", "credentials", "auth"].map(spaced).join("|")})${SEP}["']?[ \t]{0,5}[:=]`,
  "i",
);

export function mayHaveSecretAssignment(text: string): boolean {
  return SECRET_NAME_END.test(text);
}

function redactAssignments(text: string, tally: Tally): string {
  if (!mayHaveSecretAssignment(text)) return text;
  const pattern = new RegExp(ASSIGNMENT_NAME.source, "g");
  const valueAt = new RegExp(ASSIGNMENT_VALUE.source, "y");
  let out = "";
  let copied = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const name = m[1] ?? "";
    const valueStart = m.index + m[0].length;
    // Inside a marker ("[REDACTED:known_secret:X]") the "name: value" shape is ours, not a secret.
    if (!isSecretName(name) || text.startsWith("[REDACTED:", m.index - "[REDACTED:".length)) continue;
    valueAt.lastIndex = valueStart;
    const value = valueAt.exec(text)?.[0];
    if (!value || isPlaceholder(value) || isSettingNumber(name, value) || value.includes("[REDACTED")) continue;
    out += text.slice(copied, valueStart) + marker("secret_assignment");
    copied = valueStart + value.length;
    pattern.lastIndex = copied;
    tally.add("secret_assignment", 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}
