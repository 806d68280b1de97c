// The one text boundary: every string that enters the database (run events, webhook payloads,
// artifacts, attached context, tRPC input) passes through here first. PostgreSQL's text and jsonb
// cannot hold NUL (22P05) or a lone UTF-16 surrogate (22P05 / 22P02 once JSON-escaped), and a
// value nested tens of thousands of levels deep overflows every recursive walk after it
// (JSON.stringify, zod, redaction, jsonb's own parser). So:
//  - NUL becomes U+2400 (␀, visible), a lone surrogate becomes U+FFFD;
//  - text past its bound is cut with a visible marker (`…[cut: 2.1 MB]`);
//  - JSON is copied iteratively (no recursion, so depth cannot overflow the stack), nesting past
//    `maxDepth` is replaced by a marker string, and the total size is bounded.
// For input a person typed (tRPC), `findTextProblem` names the first bad spot instead, so the
// caller answers 400 rather than storing a silently altered value.

export const NUL_REPLACEMENT = "\u2400";

export type JsonLimits = {
  /** Containers nested deeper than this are replaced by a marker. */
  maxDepth: number;
  /** Longest single string (characters); longer ones are cut with a marker. */
  maxStringChars: number;
  /** Budget for the whole value, in characters of its strings and keys. */
  maxTotalChars: number;
  /** Longest object key kept (longer keys are cut). */
  maxKeyChars: number;
};

export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 64,
  maxStringChars: 1024 * 1024,
  maxTotalChars: 4 * 1024 * 1024,
  maxKeyChars: 1024,
};

const NEEDS_CLEANING = /[\u0000\uD800-\uDFFF]/;

/** Whether a string can be stored as it is (no NUL, no lone surrogate). */
export function isCleanText(s: string): boolean {
  return !NEEDS_CLEANING.test(s) || (!s.includes("\u0000") && s.isWellFormed());
}

/** NUL -> ␀, lone surrogates -> U+FFFD; everything else untouched (same length). */
export function cleanText(s: string): string {
  if (!NEEDS_CLEANING.test(s)) return s;
  const noNul = s.includes("\u0000") ? s.replaceAll("\u0000", NUL_REPLACEMENT) : s;
  return noNul.isWellFormed() ? noNul : noNul.toWellFormed();
}

/** "512 B", "64.0 kB", "2.1 MB": how much a marker says was cut (UTF-8 bytes, SI units). */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

export const cutMarker = (what: string) => `…[cut: ${what}]`;

/**
 * Clean a string and bound it to `maxChars` (the marker comes on top). The cut never splits a
 * surrogate pair, and the marker says how many bytes of UTF-8 were left out.
 */
export function boundText(s: string, maxChars: number): string {
  const clean = cleanText(s);
  if (clean.length <= maxChars) return clean;
  let end = Math.max(0, maxChars);
  // Do not leave the high half of a pair behind.
  if (end > 0 && isHighSurrogate(clean.charCodeAt(end - 1))) end--;
  const removed = Buffer.byteLength(clean.slice(end), "utf8");
  return `${clean.slice(0, end)}${cutMarker(formatSize(removed))}`;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

export type BoundJsonResult<T> = { value: T; changed: boolean };

type Container = unknown[] | Record<string, unknown>;
type Frame = { src: Container; out: Container; keys: string[] | null; i: number; depth: number };

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * A copy of a JSON-like value that PostgreSQL's jsonb can store and every later recursive walk can
 * handle: strings and keys cleaned and bounded, depth and total size bounded with visible markers.
 * Non-JSON leaves follow JSON.stringify (toJSON, undefined dropped in objects / null in arrays,
 * non-finite numbers -> null). Iterative: a value 100,000 levels deep costs no stack.
 * `changed` says whether anything was altered (cleaned, cut or converted).
 */
export function boundJson<T>(value: T, limits: Partial<JsonLimits> = {}): BoundJsonResult<T> {
  const L = { ...DEFAULT_JSON_LIMITS, ...limits };
  let budget = L.maxTotalChars;
  let changed = false;

  const leaf = (v: unknown): { value: unknown; container?: undefined } | { container: Container; value?: undefined } => {
    if (typeof v === "string") {
      const max = Math.min(L.maxStringChars, Math.max(0, budget));
      const out = boundText(v, max);
      if (out !== v) changed = true;
      budget -= out.length;
      return { value: out };
    }
    if (typeof v === "number") {
      if (Number.isFinite(v)) return { value: v };
      changed = true;
      return { value: null };
    }
    if (typeof v === "boolean" || v === null) return { value: v };
    if (Array.isArray(v) || isPlainObject(v)) return { container: v };
    if (typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function") {
      changed = true;
      return leaf((v as { toJSON: () => unknown }).toJSON());
    }
    if (typeof v === "bigint") {
      changed = true;
      return { value: v.toString() };
    }
    changed = true;
    // undefined, functions, symbols, class instances: JSON has no such value.
    return { value: typeof v === "object" ? String(v) : undefined };
  };

  const open = (src: Container, depth: number): Frame | string => {
    if (depth > L.maxDepth) {
      changed = true;
      return cutMarker(`nested deeper than ${L.maxDepth} levels`);
    }
    const keys = Array.isArray(src) ? null : Object.keys(src);
    return { src, out: Array.isArray(src) ? [] : {}, keys, i: 0, depth };
  };

  const root = leaf(value);
  if (!root.container) return { value: root.value as T, changed };
  const first = open(root.container, 1);
  if (typeof first === "string") return { value: first as T, changed };
  const stack: Frame[] = [first];
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    const length = f.keys ? f.keys.length : (f.src as unknown[]).length;
    if (f.i >= length) {
      stack.pop();
      continue;
    }
    if (budget <= 0) {
      // Out of room: say how much of this container was left out, and close every open one.
      changed = true;
      const left = length - f.i;
      if (Array.isArray(f.out)) f.out.push(cutMarker(`${left} more item${left === 1 ? "" : "s"}`));
      else f.out["…"] = cutMarker(`${left} more key${left === 1 ? "" : "s"}`);
      f.i = length;
      continue;
    }
    const index = f.i++;
    const rawKey = f.keys ? f.keys[index]! : null;
    const child = f.keys ? (f.src as Record<string, unknown>)[rawKey!] : (f.src as unknown[])[index];
    const converted = leaf(child);
    let place: unknown;
    if (converted.container) {
      const next = open(converted.container, f.depth + 1);
      if (typeof next === "string") place = next;
      else {
        place = next.out;
        stack.push(next);
      }
    } else {
      place = converted.value;
    }
    if (Array.isArray(f.out)) {
      f.out.push(place === undefined ? null : place);
      continue;
    }
    if (place === undefined) continue;
    let key = boundText(rawKey!, L.maxKeyChars);
    budget -= key.length;
    if (key !== rawKey) changed = true;
    // Two keys that clean to the same text must not overwrite each other (source keys are unique,
    // so a clash only comes from cleaning).
    while (Object.hasOwn(f.out, key)) {
      changed = true;
      key = `${key}′`;
    }
    Object.defineProperty(f.out, key, { value: place, enumerable: true, writable: true, configurable: true });
  }
  return { value: first.out as T, changed };
}

export type TextProblem = { path: string; problem: "nul" | "lone_surrogate" | "too_deep" };

/**
 * The first spot in a value that could not be stored as it is: a NUL or a lone surrogate in a
 * string or a key, or nesting past `maxDepth`. Iterative, so hostile depth costs no stack.
 */
export function findTextProblem(value: unknown, maxDepth = DEFAULT_JSON_LIMITS.maxDepth): TextProblem | null {
  const stack: { v: unknown; path: string[]; depth: number }[] = [{ v: value, path: [], depth: 0 }];
  const textProblem = (s: string): TextProblem["problem"] | null =>
    isCleanText(s) ? null : s.includes("\u0000") ? "nul" : "lone_surrogate";
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === "string") {
      const p = textProblem(v);
      if (p) return { path: showPath(path), problem: p };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= maxDepth) return { path: showPath(path), problem: "too_deep" };
    // superjson hands procedures Maps and Sets too: their keys and members are input like any other.
    const entries: [unknown, unknown][] = v instanceof Map ? [...v.entries()] : v instanceof Set ? [...v].map((x, i) => [i, x]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i]!;
      const key = typeof k === "string" ? k : String(i);
      if (typeof k === "string") {
        const p = textProblem(k);
        if (p) return { path: showPath([...path, key]), problem: p };
      } else if (k !== null && typeof k === "object") {
        stack.push({ v: k, path: [...path, `(key ${i})`], depth: depth + 1 });
      }
      stack.push({ v: x, path: [...path, key], depth: depth + 1 });
    }
  }
  return null;
}

const showPath = (path: string[]) => (path.length === 0 ? "(input)" : path.map((p) => cleanText(p).slice(0, 60)).join("."));

/** One sentence for a 400: where the input is unusable and why. */
export function describeTextProblem(p: TextProblem, maxDepth = DEFAULT_JSON_LIMITS.maxDepth): string {
  const what =
    p.problem === "nul"
      ? "contains a NUL character"
      : p.problem === "lone_surrogate"
        ? "contains an unpaired UTF-16 surrogate (not valid Unicode)"
        : `is nested more than ${maxDepth} levels deep`;
  return `${p.path} ${what}.`;
}
