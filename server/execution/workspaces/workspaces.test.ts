import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git } from "@/server/forges/local/git";
import { commitFiles, ensureBareRepo } from "@/server/forges/local/repositories";
import { createWorkspace, keepWorkspace, removeWorkspace, sweepWorkspaces, workspacePaths } from "./workspaces";

let dataDir: string;
let sha1: string;
let sha2: string;
const repository = { fullName: "acme/tool", forge: "local" as const, cloneUrl: "" };

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "airlock-ws-"));
  const { path } = await ensureBareRepo(dataDir, repository.fullName);
  sha1 = await commitFiles({ repoPath: path, branch: "main", files: { "a.txt": "one\n" }, message: "one" });
  sha2 = await commitFiles({ repoPath: path, branch: "main", files: { "a.txt": "two\n" }, message: "two" });
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe("attempt workspaces", () => {
  it("gives each attempt its own worktree at the run's commit, never shared", async () => {
    const a = await createWorkspace({ dataDir, repository, runId: "run1", attemptNumber: 1, sha: sha1 });
    const b = await createWorkspace({ dataDir, repository, runId: "run1", attemptNumber: 2, sha: sha2 });
    expect(a.dir).not.toBe(b.dir);
    expect(a.artifactsDir).not.toBe(b.artifactsDir);
    expect(await readFile(join(a.dir, "a.txt"), "utf8")).toBe("one\n");
    expect(await readFile(join(b.dir, "a.txt"), "utf8")).toBe("two\n");
    expect((await git(["rev-parse", "HEAD"], { cwd: a.dir })).trim()).toBe(sha1);
    await removeWorkspace({ dataDir, ...a });
    await removeWorkspace({ dataDir, ...b });
    expect(existsSync(a.dir)).toBe(false);
    expect(await git(["--git-dir", a.sourceRepo, "worktree", "list"])).not.toContain("attempt-1");
  });

  it("refuses a commit the repository does not have, and ids that could escape the data dir", async () => {
    await expect(createWorkspace({ dataDir, repository, runId: "run2", attemptNumber: 1, sha: "f".repeat(40) })).rejects.toThrow(/is not in acme\/tool/);
    expect(() => workspacePaths(dataDir, "../etc", 1)).toThrow(/invalid run id/);
    await expect(createWorkspace({ dataDir, repository: { ...repository, fullName: "../x" }, runId: "r", attemptNumber: 1, sha: sha1 })).rejects.toThrow();
  });

  it("keeps a failed attempt's workspace until its time, then the sweep removes it", async () => {
    const ws = await createWorkspace({ dataDir, repository, runId: "run3", attemptNumber: 1, sha: sha1 });
    const now = new Date();
    await keepWorkspace(ws.dir, new Date(now.getTime() + 60_000));
    const isActive = async () => false;
    expect(await sweepWorkspaces({ dataDir, now, orphanAfterMs: 3_600_000, isActive })).toEqual([]);
    expect(await sweepWorkspaces({ dataDir, now: new Date(now.getTime() + 61_000), orphanAfterMs: 3_600_000, isActive })).toEqual([ws.dir]);
    expect(existsSync(ws.dir)).toBe(false);
  });
});
