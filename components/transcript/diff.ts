import parseDiff from "parse-diff";

// A unified diff (a patch artifact) as files, hunks and numbered lines, ready
// to render. Parsing never evaluates anything; content stays text.

export type DiffLine = { kind: "add" | "del" | "context"; oldLine: number | null; newLine: number | null; text: string };
export type DiffHunk = { header: string; lines: DiffLine[] };
export type DiffFile = { path: string; oldPath: string | null; status: "added" | "deleted" | "renamed" | "modified"; additions: number; deletions: number; language: string | null; hunks: DiffHunk[] };

const byExtension: Record<string, string> = {
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript",
  js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
  py: "python", go: "go", rs: "rust", java: "java", kt: "kotlin", rb: "ruby", php: "php", swift: "swift",
  c: "c", h: "c", cc: "cpp", cpp: "cpp", hpp: "cpp", cs: "csharp",
  json: "json", yml: "yaml", yaml: "yaml", toml: "ini", ini: "ini", md: "markdown",
  sh: "bash", bash: "bash", zsh: "bash", css: "css", scss: "scss", less: "less",
  html: "xml", xml: "xml", svg: "xml", sql: "sql", graphql: "graphql", lua: "lua", pl: "perl", r: "r",
};

/** The highlight language for a path, by extension (null: plain text). */
export function languageOf(path: string): string | null {
  const name = path.split("/").pop() ?? "";
  if (name === "Makefile") return "makefile";
  const ext = name.includes(".") ? name.split(".").pop()!.toLowerCase() : "";
  return byExtension[ext] ?? null;
}

const clean = (p: string | undefined) => (p && p !== "/dev/null" ? p.replace(/^[ab]\//, "") : null);

export function parsePatch(text: string): DiffFile[] {
  return parseDiff(text).map((f) => {
    const from = clean(f.from);
    const to = clean(f.to);
    const path = to ?? from ?? "(unknown)";
    const status = f.new || from === null ? "added" : f.deleted || to === null ? "deleted" : from !== to ? "renamed" : "modified";
    return {
      path,
      oldPath: status === "renamed" ? from : null,
      status,
      additions: f.additions,
      deletions: f.deletions,
      language: languageOf(path),
      hunks: f.chunks.map((c) => ({
        header: c.content,
        lines: c.changes.map((ch): DiffLine => {
          const text = ch.content.slice(1);
          if (ch.type === "add") return { kind: "add", oldLine: null, newLine: ch.ln, text };
          if (ch.type === "del") return { kind: "del", oldLine: ch.ln, newLine: null, text };
          return { kind: "context", oldLine: ch.ln1, newLine: ch.ln2, text };
        }),
      })),
    };
  });
}
