import { describe, expect, it } from "vitest";
import { type LineKind, LineSplitter } from "./line-splitter";

function collect(maxLineChars?: number) {
  const lines: Array<[string, LineKind]> = [];
  const splitter = new LineSplitter((line, kind) => lines.push([line, kind]), maxLineChars);
  return { lines, splitter };
}

describe("LineSplitter", () => {
  it("splits lines across chunk boundaries and strips CR", () => {
    const { lines, splitter } = collect();
    splitter.write(Buffer.from("one\r\ntw"));
    splitter.write(Buffer.from("o\nthree\n\nfour"));
    splitter.end();
    expect(lines).toEqual([
      ["one", "line"],
      ["two", "line"],
      ["three", "line"],
      ["", "line"],
      ["four", "partial"],
    ]);
  });

  it("keeps a multi-byte character split between chunks intact", () => {
    const { lines, splitter } = collect();
    const bytes = Buffer.from("✓ done\n");
    splitter.write(bytes.subarray(0, 1));
    splitter.write(bytes.subarray(1, 2));
    splitter.write(bytes.subarray(2));
    expect(lines).toEqual([["✓ done", "line"]]);
  });

  it("cuts an oversized line and drops the rest of it up to the next newline", () => {
    const { lines, splitter } = collect(5);
    splitter.write("abcdefgh");
    splitter.write("ijk");
    splitter.write("lmn\nok\n");
    splitter.end();
    expect(lines).toEqual([
      ["abcde", "oversized"],
      ["ok", "line"],
    ]);
  });

  it("keeps the lines around a 20 MB line and counts what it cut, holding at most the bound", () => {
    const cuts: number[] = [];
    const lines: Array<[string, LineKind]> = [];
    const splitter = new LineSplitter((line, kind, cut) => {
      lines.push([line.slice(0, 10), kind]);
      cuts.push(cut);
    }, 1000);
    splitter.write("before\n");
    const chunk = "é".repeat(32 * 1024);
    for (let sent = 0; sent < 20_000_000; sent += chunk.length * 2) splitter.write(Buffer.from(chunk));
    splitter.write("\nafter\n");
    splitter.end();
    expect(lines).toEqual([
      ["before", "line"],
      ["éééééééééé", "oversized"],
      ["after", "line"],
    ]);
    expect(cuts[1]).toBe(Math.ceil(20_000_000 / (chunk.length * 2)) * chunk.length * 2 - 2000);
  });

  it("flushes nothing at the end when the last line was complete", () => {
    const { lines, splitter } = collect();
    splitter.write("a\n");
    splitter.end();
    expect(lines).toEqual([["a", "line"]]);
  });
});
