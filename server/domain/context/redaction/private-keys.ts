// PEM private key blocks, found by hand rather than by one regex: a BEGIN line without its END
// would make a lazy `[\s\S]*?` scan to the end of the text once per BEGIN (quadratic).

const BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/y;
const END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/y;
// Lines a PEM body is made of (base64, or RFC 1421 headers like "Proc-Type: 4,ENCRYPTED"), after
// an optional runner timestamp prefix.
const BODY_LINE = /^(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]{1,40}: [^\n]{0,200}|)\s*$/;

/** Where PEM private key blocks are: [start, end) of each, BEGIN line to END line. */
export function privateKeyRanges(text: string): { start: number; end: number }[] {
  if (!text.includes("PRIVATE KEY")) return [];
  const ranges: { start: number; end: number }[] = [];
  // Position of the next END marker at or after `from`, cached: once we know there is no END
  // after some point, no later BEGIN can have one either.
  let nextEnd = -2;
  const findEnd = (from: number): { start: number; end: number } | null => {
    if (nextEnd === -1) return null;
    let at = nextEnd >= from ? nextEnd : text.indexOf("-----END ", from);
    while (at !== -1) {
      END.lastIndex = at;
      const m = END.exec(text);
      if (m) {
        nextEnd = at;
        return { start: at, end: at + m[0].length };
      }
      at = text.indexOf("-----END ", at + 1);
    }
    nextEnd = -1;
    return null;
  };
  let at = text.indexOf("-----BEGIN ");
  while (at !== -1) {
    BEGIN.lastIndex = at;
    const begin = BEGIN.exec(text);
    if (!begin) {
      at = text.indexOf("-----BEGIN ", at + 1);
      continue;
    }
    const bodyStart = at + begin[0].length;
    const end = findEnd(bodyStart);
    const stop = end ? end.end : bodyEnd(text, bodyStart);
    ranges.push({ start: at, end: stop });
    at = text.indexOf("-----BEGIN ", stop);
  }
  return ranges;
}

/** Without an END marker (a truncated log), the block runs while lines look like a PEM body. */
function bodyEnd(text: string, from: number): number {
  let lineStart = text.indexOf("\n", from);
  if (lineStart === -1) return text.length;
  let stop = lineStart;
  while (lineStart !== -1 && lineStart < text.length) {
    const next = text.indexOf("\n", lineStart + 1);
    const line = text.slice(lineStart + 1, next === -1 ? text.length : next);
    if (line.trim() === "" || !BODY_LINE.test(line)) break;
    stop = next === -1 ? text.length : next;
    lineStart = next;
  }
  return stop;
}

/** Whether a line opens a PEM private key block that it does not close (a key printed line by line). */
export function opensPrivateKey(text: string): boolean {
  const ranges = privateKeyRanges(text);
  const last = ranges[ranges.length - 1];
  if (!last) return false;
  return !/-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/.test(text.slice(last.start));
}

/** Inside an open block: is this line still part of it (a body line, a header, or its END)? */
export function continuesPrivateKey(line: string): "body" | "end" | null {
  if (/-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/.test(line)) return "end";
  return line.trim() === "" || BODY_LINE.test(line) ? "body" : null;
}
