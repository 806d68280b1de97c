import Anser from "anser";

// Terminal text from agents and CI, turned into styled spans (text + colour
// data), never into HTML. Only SGR colour/style sequences survive; everything
// else a terminal would act on (OSC 8 hyperlinks, OSC 52 clipboard, titles,
// cursor movement, device queries) is removed, and so are control characters.

export type AnsiColor = { kind: "named"; name: string } | { kind: "rgb"; r: number; g: number; b: number };

export type AnsiSpan = {
  text: string;
  fg: AnsiColor | null;
  bg: AnsiColor | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  strike: boolean;
};

// Lone surrogates (invalid UTF-16, e.g. from invalid UTF-8 decoded upstream) become U+FFFD.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// OSC, DCS, SOS, PM, APC: a string up to BEL or ST; unterminated, to the end of the line (as a terminal would swallow it).
const stringSequence = /\u001b[\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)/g;
// Any escape sequence: CSI (ESC [ params intermediates final) or ESC, intermediates, one final byte.
const escapeSequence = /\u001b(?:\[([0-?]*)([ -/]*)([@-~])|[ -/]*[0-~]?)/g;
// C0 controls but tab and ESC, DEL, and C1 controls (8-bit CSI/OSC included).
const controls = /[\u0000-\u0008\u000a-\u001a\u001c-\u001f\u007f-\u009f]/g;

/**
 * One line of terminal output made safe to show: well-formed, SGR sequences
 * kept (for colours), every other sequence and control character removed; a
 * carriage return keeps what a terminal would show (the text after the last one).
 */
export function sanitizeTerminalLine(line: string): string {
  let s = line.replace(loneSurrogate, "\uFFFD");
  const cr = s.replace(/\r+$/, "").lastIndexOf("\r");
  if (cr !== -1) s = s.slice(cr + 1);
  s = s.replace(stringSequence, "");
  s = s.replace(escapeSequence, (seq, params: string | undefined, inter: string | undefined, final: string | undefined) =>
    final === "m" && inter === "" && /^[\d;]*$/.test(params ?? "") ? seq : "",
  );
  return s.replace(controls, "");
}

const named = new Set(["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]);
const paletteNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

/** The xterm 256-colour palette entry `n` (0–15 are the named colours). */
export function paletteColor(n: number): AnsiColor {
  if (n < 8) return { kind: "named", name: paletteNames[n]! };
  if (n < 16) return { kind: "named", name: `bright-${paletteNames[n - 8]!}` };
  if (n < 232) {
    const i = n - 16;
    const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
    return { kind: "rgb", r: level(Math.floor(i / 36)), g: level(Math.floor(i / 6) % 6), b: level(i % 6) };
  }
  const grey = 8 + (n - 232) * 10;
  return { kind: "rgb", r: grey, g: grey, b: grey };
}

const byte = (v: string | undefined) => Math.max(0, Math.min(255, Math.trunc(Number(v)) || 0));

function colorOf(cls: string | null, truecolor: string | null): AnsiColor | null {
  if (!cls) return null;
  if (cls === "ansi-truecolor") {
    const [r, g, b] = (truecolor ?? "").split(",");
    return { kind: "rgb", r: byte(r), g: byte(g), b: byte(b) };
  }
  const palette = /^ansi-palette-(\d{1,3})$/.exec(cls);
  if (palette) return paletteColor(Math.min(255, Number(palette[1])));
  const name = cls.replace(/^ansi-/, "");
  const base = name.replace(/^bright-/, "");
  return named.has(base) ? { kind: "named", name } : null;
}

/** Styled spans of one sanitised line (see sanitizeTerminalLine). */
export function ansiToSpans(line: string): AnsiSpan[] {
  const clean = sanitizeTerminalLine(line);
  if (!clean.includes("\u001b")) {
    return clean === "" ? [] : [{ text: clean, fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, strike: false }];
  }
  const parts = Anser.ansiToJson(clean, { json: true, remove_empty: true, use_classes: true });
  return parts.flatMap((p) => {
    // Anser leaves nothing executable, but strip any escape remnant all the same.
    const text = p.content.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
    if (text === "") return [];
    const decorations = new Set(p.decorations ?? []);
    let fg = colorOf(p.fg, p.fg_truecolor);
    let bg = colorOf(p.bg, p.bg_truecolor);
    if ((p as { isInverted?: boolean }).isInverted || decorations.has("reverse")) [fg, bg] = [bg ?? { kind: "named", name: "black" }, fg ?? { kind: "named", name: "white" }];
    return [
      {
        text,
        fg,
        bg,
        bold: decorations.has("bold"),
        dim: decorations.has("dim"),
        italic: decorations.has("italic"),
        underline: decorations.has("underline"),
        strike: decorations.has("strikethrough"),
      },
    ];
  });
}

/** Spans cut to `max` visible characters; `hidden` is how many were left out. */
export function truncateSpans(spans: AnsiSpan[], max: number): { spans: AnsiSpan[]; hidden: number } {
  const out: AnsiSpan[] = [];
  let used = 0;
  let hidden = 0;
  for (const span of spans) {
    if (used >= max) {
      hidden += span.text.length;
      continue;
    }
    const room = max - used;
    if (span.text.length <= room) {
      out.push(span);
      used += span.text.length;
    } else {
      // Never cut a surrogate pair in half.
      let cut = room;
      const code = span.text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut--;
      out.push({ ...span, text: span.text.slice(0, cut) });
      hidden += span.text.length - cut;
      used = max;
    }
  }
  return { spans: out, hidden };
}

/** Text with every terminal sequence and control character removed (for Markdown and plain displays). */
export function plainTerminalText(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => sanitizeTerminalLine(line).replace(/\u001b\[[\d;]*m/g, ""))
    .join("\n");
}
