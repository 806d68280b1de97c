// PEM private key blocks, found by hand rather than by one regex: a BEGIN line without its END
// would make a lazy `[\s\S]*?` scan to the end of the text once per BEGIN (quadratic).
import { marker } from "./patterns";

const BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/y;
const END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/y;
// Lines a PEM body is made of (base64, or RFC 1421 headers like "Proc-Type: 4,ENCRYPTED"), after
// an optional runner timestamp prefix.
const BODY_LINE = /^(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]{1,40}: [^\n]{0,200}|)\s*$/;

export function redactPrivateKeys(text: string): { text: string; count: number } {
  if (!text.includes("PRIVATE KEY")) return { text, count: 0 };
  let out = "";
  let copied = 0;
  let count = 0;
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
    const block = text.slice(at, stop);
    out += text.slice(copied, at) + marker("private_key") + "\n".repeat(countNewlines(block));
    copied = stop;
    count++;
    at = text.indexOf("-----BEGIN ", stop);
  }
  return count === 0 ? { text, count } : { text: out + text.slice(copied), count };
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

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}
