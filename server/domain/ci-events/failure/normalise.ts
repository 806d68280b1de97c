// Line clean-up for CI logs. Two levels:
// - `cleanLine`: what a person would see (no ANSI codes, no runner timestamp prefix); used to find
//   failures and for excerpts.
// - `normaliseForSignature`: also removes everything that churns between two runs of the same
//   failure (times, durations, SHAs and ids, temp and workspace paths, ports, line:column), so
//   the same failure on two commits hashes the same.
//
// Every pattern is linear: bounded repetition, or a run that can only start where the previous
// character is outside the run's class (so each character is scanned a constant number of times).

/** Longest line the signature looks at; longer lines are cut (a minified bundle is not a message). */
export const MAX_SIGNATURE_LINE = 1_000;

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks, titles).
const ANSI = /\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]/g;
// GitHub Actions prefixes each raw log line with an ISO timestamp.
const RUNNER_TIMESTAMP = /^\uFEFF?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?/;
// Workflow commands that annotate a line: keep the message, drop the marker.
const WORKFLOW_COMMAND = /^##\[(error|warning|notice|debug|group|endgroup|command)\]/;
// BuildKit's "#12 3.112 " step and elapsed-time prefix.
const BUILDKIT_PREFIX = /^#\d{1,4} \d{1,6}\.\d{1,3} /;

export function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}

export type CleanLine = { text: string; annotation: "error" | "warning" | "group" | null };

export function cleanLine(raw: string): CleanLine {
  let text = stripAnsi(raw).replace(RUNNER_TIMESTAMP, "");
  let annotation: CleanLine["annotation"] = null;
  const command = WORKFLOW_COMMAND.exec(text);
  if (command) {
    if (command[1] === "error") annotation = "error";
    else if (command[1] === "warning") annotation = "warning";
    else if (command[1] === "group" || command[1] === "endgroup") annotation = "group";
    text = text.slice(command[0].length);
  }
  text = text.replace(BUILDKIT_PREFIX, "");
  return { text: text.replace(/\r$/, ""), annotation };
}

/** Split a log into lines; a trailing newline does not make an extra empty line. */
export function splitLines(log: string): string[] {
  const lines = log.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

type Rule = readonly [pattern: RegExp, replacement: string | ((match: string) => string)];

const RULES: readonly Rule[] = [
  // Workspace checkouts of the runner: GitHub (Linux, container, Windows), GitLab, Buildkite.
  [/\/home\/runner\/work\/[^/\s]{1,100}\/[^/\s]{1,100}\//g, ""],
  [/\/__w\/[^/\s]{1,100}\/[^/\s]{1,100}\//g, ""],
  [/\/github\/workspace\//g, ""],
  [/[A-Za-z]:\\a\\[^\\\s]{1,100}\\[^\\\s]{1,100}\\/g, ""],
  [/\/builds\/[^/\s]{1,100}\/[^/\s]{1,100}\//g, ""],
  [/\/var\/lib\/buildkite-agent\/builds\/[^/\s]{1,100}\/[^/\s]{1,100}\/[^/\s]{1,100}\//g, ""],
  // Temporary directories and files.
  [/(?:\/private)?\/var\/folders\/[^\s"'`:,;)\]]{1,400}/g, "<tmp>"],
  [/\/tmp\/[^\s"'`:,;)\]]{1,400}/g, "<tmp>"],
  [/[A-Za-z]:\\Users\\[^\\\s]{1,100}\\AppData\\Local\\Temp\\[^\s"'`:,;)\]]{0,400}/g, "<tmp>"],
  // Dates and times.
  [/\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?/g, "<ts>"],
  [/\b\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\b/g, "<time>"],
  // UUIDs before hex ids: a UUID is hex separated by dashes.
  [/\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, "<uuid>"],
  [/\b0x[0-9a-fA-F]{1,32}\b/g, "<addr>"],
  // Hosts and ports (before line:column, which they resemble).
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, "<ip>"],
  [/\blocalhost:\d{1,5}\b/g, "localhost:<port>"],
  [/\[::1?\]:\d{1,5}\b/g, "[::]:<port>"],
  [/\bport \d{2,5}\b/gi, "port <port>"],
  // Source locations: the line moves when code above it changes, the failure does not.
  [/(?<=\.[A-Za-z0-9]{1,8}|Makefile|Dockerfile)(?::\d{1,7}(?::\d{1,5})?|\(\d{1,7},\d{1,5}\))/g, ":<line>"],
  [/\bline \d{1,7}\b/g, "line <n>"],
  // Kubernetes pod names: <deployment>-<replicaset hash>-<pod suffix>.
  [/(?<=[a-z0-9])-[a-z0-9]{8,10}-[a-z0-9]{5}\b/g, "-<pod>"],
  // Durations.
  [/\b\d{1,9}(?:\.\d{1,9})?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)\b/g, "<dur>"],
  // Hex ids (SHAs, digests, container ids) and long numbers (run ids, pids, byte counts).
  [/\b[0-9a-fA-F]{6,}\b/g, hexOrNumber],
];

function hexOrNumber(token: string): string {
  if (/^\d+$/.test(token)) return "<n>";
  // Needs a digit: "deadbeef"-like words stay words; a SHA always has digits.
  return token.length >= 7 && /\d/.test(token) ? "<hex>" : token;
}

export function normaliseForSignature(line: string): string {
  let text = line.length > MAX_SIGNATURE_LINE ? line.slice(0, MAX_SIGNATURE_LINE) : line;
  for (const [pattern, replacement] of RULES) {
    text = typeof replacement === "string" ? text.replace(pattern, replacement) : text.replace(pattern, replacement);
  }
  return text.replace(/\s+/g, " ").trim();
}

/** "test (ubuntu-latest, 20)" -> "test": matrix legs of one job share failures. */
export function normaliseJobName(jobName: string): string {
  return jobName.replace(/\s*\([^()]*\)\s*$/, "").trim();
}
