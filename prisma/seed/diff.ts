import { sha256 } from "@/server/lib/digest";

// A small, exact unified-diff writer for the seeded patch artifacts: a line LCS
// over a file excerpt, hunks with three lines of context, git-style headers.
// Generating the patches (instead of typing them) keeps hunk headers correct.

export type FileChange = {
  path: string;
  /** Line number of the excerpt's first line in the real file. */
  firstLine: number;
  before: string;
  /** Edits applied in order, each replacing exactly one occurrence. */
  edits: { old: string; new: string }[];
};

export function applyEdits(change: FileChange): string {
  let text = change.before;
  for (const e of change.edits) {
    const at = text.indexOf(e.old);
    if (at < 0 || text.indexOf(e.old, at + 1) >= 0) throw new Error(`seed: edit for ${change.path} must match exactly once: ${e.old}`);
    text = text.slice(0, at) + e.new + text.slice(at + e.old.length);
  }
  return text;
}

type Op = { kind: " " | "-" | "+"; line: string; oldNo: number; newNo: number };

function diffLines(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: " ", line: a[i++]!, oldNo: i, newNo: ++j });
    // Deletions before insertions, as git prints them.
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ kind: "-", line: a[i++]!, oldNo: i, newNo: j });
    else ops.push({ kind: "+", line: b[j++]!, oldNo: i, newNo: j });
  }
  return ops;
}

const CONTEXT = 3;
const sectionHeading = /^(export |async |func |def |class |describe\(|it\(|FROM |\s{0,2}(public |private )?async \w+\()/;

/** A git-style unified diff of one file excerpt. */
export function unifiedDiff(change: FileChange): string {
  const beforeLines = change.before.split("\n");
  const after = applyEdits(change);
  const ops = diffLines(beforeLines, after.split("\n"));
  const offset = change.firstLine - 1;
  const changed = ops.map((o, k) => (o.kind === " " ? -1 : k)).filter((k) => k >= 0);
  if (changed.length === 0) throw new Error(`seed: no change in ${change.path}`);

  // Group changed ops into hunks whose context windows overlap.
  const groups: [number, number][] = [];
  for (const k of changed) {
    const last = groups.at(-1);
    if (last && k - last[1] <= CONTEXT * 2) last[1] = k;
    else groups.push([k, k]);
  }
  const hunks = groups.map(([from, to]) => {
    const start = Math.max(0, from - CONTEXT);
    const end = Math.min(ops.length - 1, to + CONTEXT);
    const slice = ops.slice(start, end + 1);
    const oldCount = slice.filter((o) => o.kind !== "+").length;
    const newCount = slice.filter((o) => o.kind !== "-").length;
    const first = slice[0]!;
    const oldStart = offset + (first.kind === "+" ? first.oldNo + 1 : first.oldNo);
    const newStart = offset + (first.kind === "-" ? first.newNo + 1 : first.newNo);
    const heading = beforeLines
      .slice(0, Math.max(0, oldStart - offset - 1))
      .reverse()
      .find((l) => sectionHeading.test(l));
    const header = `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@${heading ? ` ${heading.trim()}` : ""}`;
    return [header, ...slice.map((o) => `${o.kind}${o.line}`)].join("\n");
  });
  const blob = (text: string) => sha256(`blob:${change.path}:${text}`).slice(0, 7);
  return [
    `diff --git a/${change.path} b/${change.path}`,
    `index ${blob(change.before)}..${blob(after)} 100644`,
    `--- a/${change.path}`,
    `+++ b/${change.path}`,
    ...hunks,
  ].join("\n");
}

/** A multi-file patch, as `git diff` prints it (ends with a newline). */
export const patchOf = (changes: FileChange[]) => `${changes.map(unifiedDiff).join("\n")}\n`;

/** `git diff --stat`'s last line. */
export function diffStat(changes: FileChange[]): string {
  let ins = 0;
  let del = 0;
  for (const c of changes) {
    for (const o of diffLines(c.before.split("\n"), applyEdits(c).split("\n"))) {
      if (o.kind === "+") ins++;
      if (o.kind === "-") del++;
    }
  }
  const files = `${changes.length} file${changes.length === 1 ? "" : "s"} changed`;
  return `${files}, ${ins} insertion${ins === 1 ? "" : "s"}(+), ${del} deletion${del === 1 ? "" : "s"}(-)`;
}
