// A redaction corpus: fake credentials with the real shapes (assembled at run time so secret
// scanners do not flag this file), and the ways a hostile agent or stranger would hide them from
// a pattern while a person still sees them whole: glued to ANSI colour, split by a control
// character, an OSC sequence, an SGR sequence or markdown emphasis, and used as a JSON key.
import { markdownView, visibleView } from "../visible";

const j = (...parts: string[]) => parts.join("");
// Deterministic, non-repeating filler (a tiny LCG), so no two shapes share a substring.
let state = 20261201;
const chars = (n: number, alphabet: string) =>
  Array.from({ length: n }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return alphabet[state % alphabet.length];
  }).join("");
const B62 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz";

export const SECRET_SHAPES: readonly { name: string; value: string }[] = [
  { name: "anthropic", value: j("sk-", "ant-api03-", chars(93, `${B62}-_`), "AA") },
  { name: "openai project", value: j("sk-", "proj-", chars(74, B62), "T3Blbk", "FJ", chars(74, B62)) },
  { name: "gitlab pat", value: j("gl", "pat-", chars(20, B62)) },
  { name: "npm", value: j("np", "m_", chars(36, B62)) },
  { name: "google api key", value: j("AI", "za", "Sy", chars(33, B62)) },
  { name: "slack bot", value: j("xo", "xb-", "123456789012-1234567890123-", chars(24, B62)) },
  { name: "slack user", value: j("xo", "xp-", "123456789012-1234567890123-", chars(24, B62)) },
  { name: "stripe secret", value: j("sk", "_live_", chars(24, B62)) },
  { name: "stripe restricted", value: j("rk", "_live_", chars(24, B62)) },
  { name: "github classic", value: j("gh", "p_", chars(36, B62)) },
  { name: "github fine-grained", value: j("github", "_pat_", "11", chars(80, `${B62}_`)) },
  { name: "aws access key id", value: j("AK", "IA", "Q3EGRT7NWZ5KX2YD") },
  { name: "aws secret by name", value: j("aws_secret", "_access_key=", chars(40, `${B62}/+`)) },
  {
    name: "pem private key",
    value: j("-----BEGIN ", "RSA PRIVATE KEY-----\n", chars(64, `${B62}+/`), "\n", chars(64, `${B62}+/`), "\n", chars(20, B62), "==\n-----END RSA ", "PRIVATE KEY-----"),
  },
];

/** The part of a shape a person must never see whole (an assignment's value, a key's body). */
export function secretPart(value: string): string {
  const eq = value.indexOf("=");
  if (value.startsWith("aws_secret")) return value.slice(eq + 1);
  if (value.startsWith("-----BEGIN")) return value.split("\n")[1]!;
  return value;
}

const splitAt = (s: string, parts: number) => {
  const out: string[] = [];
  for (let i = 0; i < parts; i++) out.push(s.slice(Math.floor((i * s.length) / parts), Math.floor(((i + 1) * s.length) / parts)));
  return out;
};

/** The token split in two in the middle (or in three for emphasis) the way each carrier would. */
export const DISGUISES: readonly { name: string; apply: (token: string) => string }[] = [
  { name: "plain", apply: (t) => t },
  { name: "ansi-glued", apply: (t) => `\u001b[31m${t}\u001b[0m` },
  { name: "glued to a written-out escape (JSON, shell)", apply: (t) => `\\u001b[31m${t}\\x1b[0m` },
  { name: "split by a control character", apply: (t) => splitAt(t, 2).join("\u0007") },
  { name: "split by an OSC sequence", apply: (t) => splitAt(t, 2).join("\u001b]8;;https://example.test/\u0007") },
  { name: "split by an SGR sequence", apply: (t) => splitAt(t, 2).join("\u001b[1m") },
  { name: "split by markdown emphasis", apply: (t) => splitAt(t, 3).join("**") },
];

/** Every way a stored text could show `needle` to a person: as stored, on a terminal, as markdown. */
export function showsWhole(stored: string, needle: string): boolean {
  if (stored.includes(needle)) return true;
  const visible = visibleView(stored);
  if (visible?.text.includes(needle)) return true;
  const rendered = markdownView(visible ?? { text: stored, map: null });
  return rendered?.text.includes(needle) ?? false;
}
