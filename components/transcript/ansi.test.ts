import { describe, expect, it } from "vitest";
import { ansiToSpans, paletteColor, sanitizeTerminalLine, truncateSpans } from "./ansi";

const ESC = "\u001b";

describe("sanitizeTerminalLine", () => {
  it("keeps SGR colour sequences and drops cursor movement, erase and device queries", () => {
    expect(sanitizeTerminalLine(`${ESC}[31mred${ESC}[0m ${ESC}[2K${ESC}[1A${ESC}[6n${ESC}[?25lok`)).toBe(`${ESC}[31mred${ESC}[0m ok`);
  });

  it("strips OSC 8 hyperlinks (BEL or ST terminated), keeping the visible text only", () => {
    expect(sanitizeTerminalLine(`${ESC}]8;;javascript:alert(1)\u0007click${ESC}]8;;\u0007`)).toBe("click");
    expect(sanitizeTerminalLine(`${ESC}]8;;https://evil.test${ESC}\\here${ESC}]8;;${ESC}\\`)).toBe("here");
  });

  it("strips OSC 52 clipboard writes, titles, DCS/APC strings and an unterminated OSC", () => {
    expect(sanitizeTerminalLine(`a${ESC}]52;c;ZXZpbA==\u0007b${ESC}]0;title\u0007c${ESC}P1$r${ESC}\\d${ESC}_apc${ESC}\\e`)).toBe("abcde");
    expect(sanitizeTerminalLine(`before${ESC}]8;;javascript:alert(1) never ends`)).toBe("before");
  });

  it("removes C0 and C1 control characters (8-bit CSI included) but keeps tabs", () => {
    expect(sanitizeTerminalLine("a\u0000b\u0007c\u009b31md\te\u007f")).toBe("abc31md\te");
  });

  it("shows what a terminal shows after a carriage return", () => {
    expect(sanitizeTerminalLine("progress 10%\rprogress 100%\r")).toBe("progress 100%");
  });

  it("replaces lone surrogates (invalid UTF-8 upstream) and keeps valid pairs", () => {
    expect(sanitizeTerminalLine("a\uD800b\uDFFFc😀")).toBe("a\uFFFDb\uFFFDc😀");
  });
});

describe("ansiToSpans", () => {
  it("turns SGR into colour and style data, never markup", () => {
    const spans = ansiToSpans(`${ESC}[1;31merror${ESC}[0m: ${ESC}[4;38;5;208m<b>x</b>${ESC}[0m`);
    expect(spans).toMatchObject([
      { text: "error", fg: { kind: "named", name: "red" }, bold: true },
      { text: ": ", fg: null, bold: false },
      { text: "<b>x</b>", fg: { kind: "rgb", r: 255, g: 135, b: 0 }, underline: true },
    ]);
  });

  it("reads 24-bit colours as clamped numbers", () => {
    expect(ansiToSpans(`${ESC}[38;2;1;2;3mx`)[0]?.fg).toEqual({ kind: "rgb", r: 1, g: 2, b: 3 });
  });

  it("handles a 1 MB line without escapes as one span", () => {
    const spans = ansiToSpans("x".repeat(1024 * 1024));
    expect(spans).toHaveLength(1);
    expect(spans[0]!.text.length).toBe(1024 * 1024);
  });
});

describe("paletteColor", () => {
  it("maps the xterm palette: named, cube and greys", () => {
    expect(paletteColor(1)).toEqual({ kind: "named", name: "red" });
    expect(paletteColor(9)).toEqual({ kind: "named", name: "bright-red" });
    expect(paletteColor(16)).toEqual({ kind: "rgb", r: 0, g: 0, b: 0 });
    expect(paletteColor(231)).toEqual({ kind: "rgb", r: 255, g: 255, b: 255 });
    expect(paletteColor(232)).toEqual({ kind: "rgb", r: 8, g: 8, b: 8 });
  });
});

describe("truncateSpans", () => {
  it("cuts at the visible length across spans and says how much it hid", () => {
    const spans = ansiToSpans(`${ESC}[31mabc${ESC}[0mdefgh`);
    const { spans: cut, hidden } = truncateSpans(spans, 5);
    expect(cut.map((s) => s.text)).toEqual(["abc", "de"]);
    expect(hidden).toBe(3);
  });

  it("never splits a surrogate pair", () => {
    const { spans } = truncateSpans(ansiToSpans("ab😀cd"), 3);
    expect(spans.map((s) => s.text).join("")).toBe("ab");
  });
});
