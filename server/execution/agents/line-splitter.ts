import { StringDecoder } from "node:string_decoder";

// Splits a byte stream into lines: UTF-8 safe across chunk boundaries (invalid bytes become
// U+FFFD), CRLF tolerant, and bounded: a line longer than maxLineChars keeps its first
// maxLineChars characters and the rest is counted, not held, until the next newline, so one
// runaway line (a 20 MB minified bundle) cannot exhaust memory. The cut line is emitted when it
// ends, with the number of UTF-8 bytes left out, so the transcript can say how much was cut.

export type LineKind = "line" | "partial" | "oversized";

export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  /** The kept head of a line past the bound, and the bytes of it dropped so far. */
  private oversized: { head: string; cutBytes: number } | null = null;

  constructor(
    private readonly onLine: (line: string, kind: LineKind, cutBytes: number) => void,
    private readonly maxLineChars = 1024 * 1024,
  ) {}

  write(chunk: Buffer | string): void {
    const decoded = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let start = 0;
    if (this.oversized) {
      const nl = decoded.indexOf("\n");
      if (nl === -1) {
        this.oversized.cutBytes += Buffer.byteLength(decoded, "utf8");
        return;
      }
      this.oversized.cutBytes += Buffer.byteLength(stripCr(decoded.slice(0, nl)), "utf8");
      this.emitOversized();
      start = nl + 1;
    }
    const text = start === 0 ? this.pending + decoded : decoded.slice(start);
    this.pending = "";
    start = 0;
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      const line = stripCr(text.slice(start, nl));
      if (line.length > this.maxLineChars) this.emitCut(line);
      else this.onLine(line, "line", 0);
      start = nl + 1;
    }
    const rest = text.slice(start);
    if (rest.length > this.maxLineChars) {
      this.oversized = { head: rest.slice(0, this.maxLineChars), cutBytes: Buffer.byteLength(rest.slice(this.maxLineChars), "utf8") };
    } else {
      this.pending = rest;
    }
  }

  /** Flushes a last line that had no newline (a process that exited mid-line). */
  end(): void {
    const tail = this.decoder.end();
    if (this.oversized) {
      this.oversized.cutBytes += Buffer.byteLength(tail, "utf8");
      this.emitOversized();
      return;
    }
    const rest = this.pending + tail;
    this.pending = "";
    if (rest.length > this.maxLineChars) this.emitCut(rest);
    else if (rest.length > 0) this.onLine(stripCr(rest), "partial", 0);
  }

  private emitCut(line: string) {
    this.onLine(line.slice(0, this.maxLineChars), "oversized", Buffer.byteLength(line.slice(this.maxLineChars), "utf8"));
  }

  private emitOversized() {
    const { head, cutBytes } = this.oversized!;
    this.oversized = null;
    this.onLine(head, "oversized", cutBytes);
  }
}

const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);
