import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git } from "./git";
import { commitIds, importHistory, type HistoryCommit } from "./history";
import { commitFiles, ensureBareRepo, resolveRevision } from "./repositories";

const dirs: string[] = [];
const scratch = async () => {
  const d = await mkdtemp(join(tmpdir(), "airlock-history-"));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const date = new Date("2026-01-05T09:00:00Z");
const commits: HistoryCommit[] = [
  { name: "base", files: { "README.md": "# demo\n", "src/a.ts": "export const a = 1;\n", "src/b/c.ts": "x\n", "src-extra.txt": "sorts after src/\n" }, message: "Initial commit\n", date },
  { name: "next", parent: "base", files: { "README.md": "# demo\n\nMore.\n", "src/a.ts": "export const a = 2;\n" }, message: "Change a\n\nWith a body.\n", date: new Date(date.getTime() + 60_000) },
  { name: "side", parent: "base", files: { "README.md": "# side\n" }, message: "A sibling of next\n", date: new Date(date.getTime() + 120_000) },
];

describe("local forge history", () => {
  it("computes the ids git gives the commits, and writes them with their refs", async () => {
    const dataDir = await scratch();
    const ids = commitIds(commits);
    const result = await importHistory({
      dataDir,
      fullName: "acme/history",
      defaultBranch: "main",
      commits,
      refs: [
        { ref: "refs/heads/main", commit: "next" },
        { ref: "refs/tags/v1.0.0", commit: "base" },
        { ref: "refs/pull/7/head", commit: "side" },
      ],
    });
    expect(result.ids).toEqual(ids);
    expect(result.created).toEqual(["refs/heads/main", "refs/tags/v1.0.0", "refs/pull/7/head"]);
    expect(await resolveRevision(result.path, "main")).toBe(ids.next);
    expect(await resolveRevision(result.path, "v1.0.0")).toBe(ids.base);
    expect(await resolveRevision(result.path, "refs/pull/7/head")).toBe(ids.side);
    expect((await git(["--git-dir", result.path, "show", "--format=%B", "-s", ids.next!])).trim()).toBe("Change a\n\nWith a body.");
    expect(await git(["--git-dir", result.path, "show", `${ids.side}:README.md`])).toBe("# side\n");
    // No scratch refs are left behind.
    expect((await git(["--git-dir", result.path, "for-each-ref", "--format=%(refname)"])).trim().split("\n").sort()).toEqual(["refs/heads/main", "refs/pull/7/head", "refs/tags/v1.0.0"]);
  });

  it("creates only missing refs on a second import, never moving one a person pushed to", async () => {
    const dataDir = await scratch();
    const first = await importHistory({ dataDir, fullName: "acme/again", defaultBranch: "main", commits, refs: [{ ref: "refs/heads/main", commit: "next" }] });
    const pushed = await commitFiles({ repoPath: first.path, branch: "main", files: { "later.txt": "a person's commit\n" }, message: "Later work" });
    const again = await importHistory({ dataDir, fullName: "acme/again", defaultBranch: "main", commits, refs: [{ ref: "refs/heads/main", commit: "next" }, { ref: "refs/heads/side", commit: "side" }] });
    expect(again.created).toEqual(["refs/heads/side"]);
    expect(await resolveRevision(first.path, "main")).toBe(pushed);
  });

  it("matches the ids of commits git makes itself from the same files and dates", async () => {
    const dataDir = await scratch();
    const { path } = await ensureBareRepo(dataDir, "acme/plain", "main");
    const sha = await commitFiles({ repoPath: path, branch: "main", files: commits[0]!.files, message: "Initial commit", date });
    expect(sha).toBe(commitIds([commits[0]!]).base);
  });
});
