// Where the secrets in a text are: granted values, PEM blocks, secretlint's preset, Airlock's own
// token shapes and secret-ish assignments, each found on the text as stored, as a terminal shows
// it and as rendered markdown shows it (visible.ts), and mapped back to stored ranges.
import { ASSIGNMENT_NAME, ASSIGNMENT_VALUE, TOKEN_PATTERNS, isPlaceholder, isSecretName, isSettingNumber, type SecretKind } from "./patterns";
import { privateKeyRanges } from "./private-keys";
import { secretlintHits } from "./secretlint";
import { markdownView, storedRange, visibleView, type View } from "./visible";

export type Hit = { start: number; end: number; kind: SecretKind; name?: string; label?: string };

export type PreparedSecret = { name: string; label: string | undefined; variants: string[] };

/** Every hit in `text`, in stored coordinates, possibly overlapping (see mergeHits). */
export function findHits(text: string, known: readonly PreparedSecret[]): Hit[] {
  const hits = scan(text, known);
  const visible = visibleView(text);
  const rendered = markdownView(visible ?? { text, map: null });
  for (const view of [visible, rendered]) {
    if (!view) continue;
    // Assignments are left to the views that keep their values whole: with emphasis stripped,
    // "password=***" would read as a name with a value it does not have.
    for (const h of scan(view.text, known, view !== rendered)) {
      const [start, end] = storedRange(view as View, h.start, h.end);
      hits.push({ ...h, start, end });
    }
  }
  return hits;
}

// Precise finders (a granted value, a PEM block, a shape that names its secret part) come first;
// secretlint's findings, whose ranges may span a whole URL or assignment, and Airlock's
// assignment rule only fill in where nothing precise matched: they never widen a precise range
// (which would eat readable text around it, "postgres://app:" or "@db:5432").
const tier = (kind: SecretKind) => (kind === "secret_assignment" ? 2 : kind === "token_shape" ? 1 : 0);
const rank = (kind: SecretKind) => (kind === "known_secret" ? 0 : kind === "private_key" ? 1 : 2);

/** Non-overlapping hits, in order, each named after its most specific finding. */
export function mergeHits(hits: Hit[]): Hit[] {
  const byStart = (a: Hit, b: Hit) => a.start - b.start || b.end - a.end;
  let accepted: Hit[] = [];
  for (const t of [0, 1, 2]) {
    const candidates = hits.filter((h) => tier(h.kind) === t).sort(byStart);
    if (candidates.length === 0) continue;
    const kept = candidates.filter((h) => !overlapsAny(accepted, h));
    const merged: Hit[] = [];
    for (const h of kept) {
      const last = merged[merged.length - 1];
      if (last && h.start < last.end) {
        last.end = Math.max(last.end, h.end);
        if (rank(h.kind) < rank(last.kind)) Object.assign(last, { kind: h.kind, name: h.name, label: h.label });
      } else {
        merged.push({ ...h });
      }
    }
    accepted = [...accepted, ...merged].sort(byStart);
  }
  return accepted;
}

/** Whether `h` overlaps a hit of `sorted` (non-overlapping, by start). */
function overlapsAny(sorted: readonly Hit[], h: Hit): boolean {
  let lo = 0;
  let hi = sorted.length;
  // The first accepted hit ending after h starts.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.end <= h.start) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo]!.start < h.end;
}

function scan(text: string, known: readonly PreparedSecret[], assignments = true): Hit[] {
  const hits: Hit[] = [];
  for (const secret of known) {
    for (const needle of secret.variants) {
      for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
        hits.push({ start: at, end: at + needle.length, kind: "known_secret", name: secret.name, label: secret.label });
      }
    }
  }
  for (const r of privateKeyRanges(text)) hits.push({ ...r, kind: "private_key" });
  for (const { kind, pattern, secret, accept } of TOKEN_PATTERNS) {
    if (!quickCheck(kind, text)) continue;
    for (const m of text.matchAll(pattern)) {
      const span = m.indices?.[secret ?? 0];
      const value = m[secret ?? 0];
      if (!span || value === undefined || (accept && !accept(value))) continue;
      hits.push({ start: span[0], end: span[1], kind });
    }
  }
  for (const h of secretlintHits(text)) {
    // A connection string whose password is already a marker is not a secret any more.
    if (text.slice(h.start, h.end).includes("[REDACTED")) continue;
    hits.push({ start: h.start, end: h.end, kind: "token_shape", name: h.rule, label: h.rule });
  }
  if (assignments) assignmentHits(text, hits);
  return hits;
}

/** Skip a whole pass when its anchor text cannot occur (most log chunks have no tokens at all). */
function quickCheck(kind: SecretKind, text: string): boolean {
  switch (kind) {
    case "github_token":
      return text.includes("gh") || text.includes("github_pat_");
    case "slack_token":
      return text.includes("xox") || text.includes("xapp-");
    case "slack_webhook":
      return text.includes("hooks.slack.com");
    case "anthropic_key":
      return text.includes("sk-ant-");
    case "openai_key":
      return text.includes("sk-");
    case "gitlab_token":
      return text.includes("gl");
    case "npm_token":
      return text.includes("npm_");
    case "google_api_key":
      return text.includes("AIza");
    case "stripe_key":
      return text.includes("_live_") || text.includes("_test_");
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

function assignmentHits(text: string, hits: Hit[]): void {
  if (!mayHaveSecretAssignment(text)) return;
  const pattern = new RegExp(ASSIGNMENT_NAME.source, "g");
  const valueAt = new RegExp(ASSIGNMENT_VALUE.source, "y");
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const name = m[1] ?? "";
    const valueStart = m.index + m[0].length;
    // Inside a marker ("[REDACTED:known_secret:X]") the "name: value" shape is ours, not a secret.
    if (!isSecretName(name) || text.startsWith("[REDACTED:", m.index - "[REDACTED:".length)) continue;
    valueAt.lastIndex = valueStart;
    const value = valueAt.exec(text)?.[0];
    if (!value || isPlaceholder(value) || isSettingNumber(name, value) || value.includes("[REDACTED")) continue;
    hits.push({ start: valueStart, end: valueStart + value.length, kind: "secret_assignment" });
    pattern.lastIndex = valueStart + value.length;
  }
}
