// What a person will see of a stored text, with a map back to the stored characters, so a secret
// is matched where it shows on screen however it is stored. Mirrors the renderers:
//  - terminal text (components/transcript/ansi.ts): escape sequences (CSI, SGR, OSC/DCS strings
//    up to BEL, ST or the end of the line) and control characters (C0 but tab and newline, CR,
//    DEL, C1) are not shown, so "\x1b[31m" glued to a token, or a BEL or OSC 8 link inside one,
//    must not hide it; nor must an invisible character (zero-width space, soft hyphen, BOM);
//  - escape sequences written out as text (JSON's "\u001b[31m", a shell's "\x1b[31m", "\033[",
//    "\e["): shown as characters, but they must not glue to the token after them either (the
//    token's pattern would see the "m" of "[31m"), so they count as hidden too;
//  - markdown (react-markdown + GFM): emphasis and code delimiters (`*`, `~`, a backtick) and
//    backslash escapes vanish on screen, so "gh**p_**abc" shows as one token, and numeric
//    character references are decoded ("&#x67;hp_..." shows "ghp_...");
//  - invisible formatting characters (zero-width, soft hyphen, BOM, bidi controls) anywhere.
// Each view is built only when the text holds something it removes; otherwise it is the text.

export type View = {
  text: string;
  /** map[i] = index in the stored text of the view's character i (null: the view is the text). */
  map: Int32Array | null;
  /** Where the stored spelling of character i ends, when it is longer than one (an entity). */
  mapEnd?: Int32Array;
};

const HAS_HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]|\\(?:u001[bB]|x1[bB]|033|e[[\]])/;
/** A written-out ESC at `i` (a backslash): the length of its spelling, or 0. */
const ESCAPED_ESC = /\\(?:u001[bB]|x1[bB]|033|e(?=[[\]]))/y;
const escapedEscAt = (text: string, i: number) => {
  ESCAPED_ESC.lastIndex = i;
  return ESCAPED_ESC.exec(text)?.[0].length ?? 0;
};
const HAS_MARKDOWN = /[*~`\\]|&#/;
const CHARACTER_REFERENCE = /&#(?:([0-9]{1,7})|[xX]([0-9a-fA-F]{1,6}));/y;

const isInvisible = (c: number) =>
  c <= 0x08 ||
  (c >= 0x0b && c <= 0x1f && c !== 0x1b) ||
  (c >= 0x7f && c <= 0x9f) ||
  c === 0xad ||
  (c >= 0x200b && c <= 0x200f) ||
  (c >= 0x202a && c <= 0x202e) ||
  (c >= 0x2060 && c <= 0x2069) ||
  c === 0xfeff;

/** The text as a terminal view shows it, or null when nothing in it is hidden. */
export function visibleView(text: string): View | null {
  if (!HAS_HIDDEN.test(text)) return null;
  const out: string[] = [];
  const map = new Int32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x1b) {
      i = skipEscape(text, i);
      continue;
    }
    if (c === 0x5c /* \ */) {
      const spelled = escapedEscAt(text, i);
      if (spelled > 0) {
        // Parse what follows as if a real ESC stood at the spelling's last character.
        i = skipEscape(text, i + spelled - 1, true);
        continue;
      }
    }
    if (isInvisible(c)) {
      i++;
      continue;
    }
    out.push(text[i]!);
    map[n++] = i;
    i++;
  }
  return { text: out.join(""), map: map.subarray(0, n) };
}

/** Index after the escape sequence whose ESC is at `i` (`spelled`: written out, so BEL may be too). */
function skipEscape(text: string, i: number, spelled = false): number {
  const next = text[i + 1];
  if (next === undefined) return i + 1;
  if ("]PX^_".includes(next)) {
    // A string sequence: up to BEL or ST, or (unterminated) the end of the line.
    for (let j = i + 2; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x07) return j + 1;
      if (c === 0x1b && text[j + 1] === "\\") return j + 2;
      if (spelled && c === 0x5c) {
        const bel = /\\(?:u0007|x07|a)/y;
        bel.lastIndex = j;
        const m = bel.exec(text);
        if (m) return j + m[0].length;
        const esc = escapedEscAt(text, j);
        if (esc > 0 && text[j + esc] === "\\") return j + esc + (text[j + esc + 1] === "\\" ? 2 : 1);
      }
      if (c === 0x0a) return j;
    }
    return text.length;
  }
  let j = i + 1;
  if (next === "[") {
    j++;
    while (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x3f) j++;
    while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
    if (j < text.length && text.charCodeAt(j) >= 0x40 && text.charCodeAt(j) <= 0x7e) j++;
    return j;
  }
  while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
  if (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x7e) j++;
  return j;
}

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;

/** The view as rendered markdown shows it (emphasis, code and escape characters gone), or null. */
export function markdownView(base: View): View | null {
  const text = base.text;
  if (!HAS_MARKDOWN.test(text)) return null;
  const out: string[] = [];
  const map = new Int32Array(text.length);
  const mapEnd = new Int32Array(text.length);
  const stored = (i: number) => (base.map ? base.map[i]! : i);
  const storedEnd = (i: number) => (base.mapEnd ? base.mapEnd[i]! : stored(i));
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "*" || ch === "~" || ch === "`") continue;
    if (ch === "\\" && i + 1 < text.length && ASCII_PUNCTUATION.test(text[i + 1]!)) continue;
    if (ch === "&") {
      CHARACTER_REFERENCE.lastIndex = i;
      const ref = CHARACTER_REFERENCE.exec(text);
      const code = ref ? Number.parseInt(ref[1] ?? ref[2]!, ref[1] ? 10 : 16) : NaN;
      if (ref && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)) {
        // One shown character, spelled over the whole reference.
        const decoded = String.fromCodePoint(code);
        const last = i + ref[0].length - 1;
        for (const unit of decoded.split("")) {
          out.push(unit);
          map[n] = stored(i);
          mapEnd[n++] = storedEnd(last);
        }
        i = last;
        continue;
      }
    }
    out.push(ch);
    map[n] = stored(i);
    mapEnd[n++] = storedEnd(i);
  }
  return { text: out.join(""), map: map.subarray(0, n), mapEnd: mapEnd.subarray(0, n) };
}

/** The stored range [start, end) behind the view's range [start, end). */
export function storedRange(view: View, start: number, end: number): [number, number] {
  if (!view.map || end <= start) return [start, end];
  return [view.map[start]!, (view.mapEnd ?? view.map)[end - 1]! + 1];
}
