import { StringDecoder } from "node:string_decoder";

// Splits a byte stream into lines: UTF-8 safe across chunk boundaries, CRLF
// tolerant, and bounded (a line longer than maxLineChars is cut, the rest of it
// dropped until the next newline) so one runaway line cannot exhaust memory.

export type LineKind = "line" | "partial" | "oversized";

export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  private discarding = false;

  constructor(
    private readonly onLine: (line: string, kind: LineKind) => void,
    private readonly maxLineChars = 1024 * 1024,
  ) {}

  write(chunk: Buffer | string): void {
    const text = this.pending + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      if (this.discarding) this.discarding = false;
      else this.onLine(stripCr(text.slice(start, nl)), "line");
      start = nl + 1;
    }
    const rest = text.slice(start);
    if (this.discarding) {
      this.pending = "";
    } else if (rest.length > this.maxLineChars) {
      this.onLine(rest.slice(0, this.maxLineChars), "oversized");
      this.pending = "";
      this.discarding = true;
    } else {
      this.pending = rest;
    }
  }

  /** Flushes a last line that had no newline (a process that exited mid-line). */
  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    if (rest.length > 0 && !this.discarding) this.onLine(stripCr(rest), "partial");
    this.discarding = false;
  }
}

const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);
