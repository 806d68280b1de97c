import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

// Finds code that writes a run, attempt or approval status outside the transition modules, so
// the one write path per lifecycle is held by a test (status-writes.test.ts) rather than by
// memory. It reads the source: a Prisma update/updateMany/upsert on one of the three models
// whose arguments set `status`, or raw SQL that UPDATEs one of their tables and SETs "status".
// Creating a row in its first status (a new run, attempt or request) is not a transition.
// Tests and test fixtures set up states directly on purpose and are not scanned.

export const transitionModules = ["server/domain/runs/transition.ts", "server/domain/approvals/transition.ts"] as const;

const models = /\b(agentDispatchRun|dispatchAttempt|approvalRequest)\.(update|updateMany|upsert)\(/g;
const rawUpdate = /UPDATE\s+"(AgentDispatchRun|DispatchAttempt|ApprovalRequest)"[^`]*?\bSET\b(?:(?!\bWHERE\b)[^`])*?"status"\s*=/g;

/** The text from an opening bracket to its match. */
function balancedAt(source: string, open: number): string {
  const [o, c] = source[open] === "(" ? ["(", ")"] : ["{", "}"];
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === o) depth++;
    else if (source[i] === c && --depth === 0) return source.slice(open, i + 1);
  }
  return source.slice(open);
}

/** The objects a Prisma write stores (`data`, and an upsert's `update` / `create`), not its `where`. */
function writtenObjects(args: string): string[] {
  return [...args.matchAll(/\b(data|update|create)\s*:\s*\{/g)].map((m) => balancedAt(args, m.index + m[0].length - 1));
}

export type StatusWrite = { file: string; line: number; what: string };

export function statusWritesIn(file: string, source: string): StatusWrite[] {
  const found: StatusWrite[] = [];
  const lineOf = (index: number) => source.slice(0, index).split("\n").length;
  for (const m of source.matchAll(models)) {
    const args = balancedAt(source, m.index + m[0].length - 1);
    if (writtenObjects(args).some((data) => /\bstatus\s*:/.test(data))) found.push({ file, line: lineOf(m.index), what: `${m[1]}.${m[2]}` });
  }
  for (const m of source.matchAll(rawUpdate)) found.push({ file, line: lineOf(m.index), what: `UPDATE "${m[1]}"` });
  return found;
}

const skipped = (path: string) =>
  /(^|\/)(node_modules|generated|testing|\.next)(\/|$)/.test(path) || /\.test\.tsx?$/.test(path) || /(^|\/)test-fixtures\.ts$/.test(path);

/** Every status write under `dirs` (relative to `root`) outside the transition modules. */
export function statusWritesOutsideTransitions(root: string, dirs: readonly string[] = ["server", "app", "components"]): StatusWrite[] {
  const out: StatusWrite[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (skipped(path)) continue;
      if (e.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(e.name) && !(transitionModules as readonly string[]).includes(path)) {
        out.push(...statusWritesIn(relative(root, join(root, path)), readFileSync(join(root, path), "utf8")));
      }
    }
  };
  for (const d of dirs) walk(d);
  return out;
}
