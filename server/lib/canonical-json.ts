// Canonical JSON: one byte sequence per value, so equal bundles have equal digests whatever order
// their keys were built in. Object keys are sorted by UTF-16 code units (as RFC 8785 does),
// there is no whitespace, and strings and numbers are written exactly as JSON.stringify writes
// them. Undefined object members are dropped (as JSON.stringify does); anything JSON cannot
// carry faithfully (NaN, Infinity, bigint, functions, symbols, Maps, class instances, cycles)
// is an error rather than silently changed.
// (No imports: this file is safe in client bundles. Hashing lives in server/lib/digest.ts.)
//



export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot represent ${value}`);
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`canonical JSON cannot represent a ${typeof value}`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError("canonical JSON cannot represent a cycle");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      return `[${obj.map((item) => (item === undefined ? "null" : write(item, seen))).join(",")}]`;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`canonical JSON cannot represent a ${obj.constructor?.name ?? "non-plain object"}`);
    }
    const entries = Object.keys(obj)
      .sort()
      .filter((k) => (obj as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${write((obj as Record<string, unknown>)[k], seen)}`);
    return `{${entries.join(",")}}`;
  } finally {
    seen.delete(obj);
  }
}
