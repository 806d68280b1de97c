// A bounded window of a CI log around its first failure: what the agent and the run page see
// instead of a multi-megabyte log.
import { locateFirstError } from "@/server/domain/ci-events/failure/failure-signature";
import { splitLines, stripAnsi } from "@/server/domain/ci-events/failure/normalise";

export type LogExcerptOptions = {
  /** Most lines kept (default 200). */
  maxLines?: number;
  /** Most UTF-8 bytes kept, newlines included (default 64 KiB). */
  maxBytes?: number;
  /** Longer lines are cut and marked (default 2,000 bytes). */
  maxLineBytes?: number;
  /** 1-based line to centre on; default: the first failure found, else the end of the log. */
  focusLine?: number | null;
  /** Drop ANSI escape codes (default true: agents read text, not terminals). */
  stripAnsi?: boolean;
};

export type LogExcerpt = {
  text: string;
  /** 1-based number of the excerpt's first line in the full log (0 lines: startLine 1, endLine 0). */
  startLine: number;
  endLine: number;
  /** The line the window was centred on, or null when it is the tail of the log. */
  focusLine: number | null;
  totalLines: number;
  /** True when lines were left out or cut. */
  truncated: boolean;
  bytes: number;
};

export const EXCERPT_DEFAULTS = { maxLines: 200, maxBytes: 64 * 1024, maxLineBytes: 2_000 } as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const byteLength = (s: string) => encoder.encode(s).length;

export function buildLogExcerpt(log: string, options: LogExcerptOptions = {}): LogExcerpt {
  const maxLines = Math.max(1, options.maxLines ?? EXCERPT_DEFAULTS.maxLines);
  const maxBytes = Math.max(1, options.maxBytes ?? EXCERPT_DEFAULTS.maxBytes);
  const maxLineBytes = Math.max(16, options.maxLineBytes ?? EXCERPT_DEFAULTS.maxLineBytes);
  const lines = log === "" ? [] : splitLines(log);
  const total = lines.length;
  if (total === 0) return { text: "", startLine: 1, endLine: 0, focusLine: null, totalLines: 0, truncated: false, bytes: 0 };

  const requested = options.focusLine === undefined ? locateFirstError(log) : options.focusLine;
  const focus = requested === null ? null : Math.min(Math.max(1, Math.trunc(requested)), total);

  // Line window first: centred on the focus (half before, half after), or the log's tail.
  const size = Math.min(maxLines, total);
  let start = focus === null ? total - size + 1 : focus - Math.floor((size - 1) / 2);
  start = Math.min(Math.max(1, start), total - size + 1);
  let end = start + size - 1;

  let cut = false;
  const render = (n: number) => {
    const raw = lines[n - 1] ?? "";
    const line = (options.stripAnsi ?? true) ? stripAnsi(raw) : raw;
    const bytes = byteLength(line);
    if (bytes <= maxLineBytes) return line;
    cut = true;
    const kept = truncateBytes(line, maxLineBytes);
    return `${kept} …[+${bytes - byteLength(kept)} bytes]`;
  };
  const window: string[] = [];
  for (let n = start; n <= end; n++) window.push(render(n));

  // Then bytes: drop the line farthest from the focus until the window fits.
  let bytes = window.reduce((sum, l) => sum + byteLength(l) + 1, 0) - 1;
  const anchor = focus ?? total;
  while (bytes > maxBytes && window.length > 1) {
    const dropFirst = anchor - start > end - anchor;
    const dropped = dropFirst ? window.shift() : window.pop();
    bytes -= byteLength(dropped ?? "") + 1;
    if (dropFirst) start++;
    else end--;
  }
  if (bytes > maxBytes) {
    window[0] = truncateBytes(window[0] ?? "", maxBytes);
    bytes = byteLength(window[0]);
    cut = true;
  }
  return {
    text: window.join("\n"),
    startLine: start,
    endLine: end,
    focusLine: focus,
    totalLines: total,
    truncated: cut || start > 1 || end < total,
    bytes,
  };
}

/** Cut to at most `max` UTF-8 bytes without splitting a character. */
function truncateBytes(s: string, max: number): string {
  const bytes = encoder.encode(s);
  if (bytes.length <= max) return s;
  return decoder.decode(bytes.subarray(0, max)).replace(/\uFFFD+$/, "");
}
