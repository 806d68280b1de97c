import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { assertRevision, git, GitError } from "@/server/forges/local/git";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";

// One workspace per attempt: a git worktree of the repository at the run's head SHA, under
// `<dataDir>/workspaces/<runId>/attempt-<n>`, with the attempt's artifacts folder beside it under
// `<dataDir>/artifacts/<runId>/attempt-<n>` (artifacts outlive the workspace). Attempt numbers
// are never reused, so two attempts never share a directory. A workspace is removed when its
// attempt succeeds and kept for a while after a failure so a person can look inside.

export type WorkspaceRepository = { fullName: string; forge: "local" | "github"; cloneUrl: string };

export type Workspace = { dir: string; artifactsDir: string; sourceRepo: string };

const idSegment = /^[A-Za-z0-9_-]{1,100}$/;

export function workspacePaths(dataDir: string, runId: string, attemptNumber: number) {
  if (!idSegment.test(runId)) throw new Error(`invalid run id "${runId}"`);
  const leaf = `attempt-${attemptNumber}`;
  return {
    dir: resolve(dataDir, "workspaces", runId, leaf),
    artifactsDir: resolve(dataDir, "artifacts", runId, leaf),
    keepMarker: resolve(dataDir, "workspaces", runId, `${leaf}.keep-until`),
  };
}

/** Where the repository's objects come from: the local forge, or a mirror of a remote one. */
async function sourceRepository(dataDir: string, repo: WorkspaceRepository, sha: string): Promise<string> {
  if (repo.forge === "local") {
    const path = bareRepoPath(dataDir, repo.fullName);
    if (!existsSync(join(path, "HEAD"))) throw new GitError(`the local forge has no repository ${repo.fullName}`, null, "");
    return path;
  }
  const mirror = resolve(dataDir, "mirrors", `${bareRepoPath(dataDir, repo.fullName).split("/forge/")[1]}`);
  if (!existsSync(join(mirror, "HEAD"))) {
    await mkdir(dirname(mirror), { recursive: true });
    await git(["clone", "--quiet", "--mirror", repo.cloneUrl, mirror], { timeoutMs: 10 * 60_000 });
  } else if ((await resolveRevision(mirror, sha)) === null) {
    await git(["--git-dir", mirror, "fetch", "--quiet", "--prune", "origin"], { timeoutMs: 10 * 60_000 });
  }
  return mirror;
}

export async function createWorkspace(opts: {
  dataDir: string;
  repository: WorkspaceRepository;
  runId: string;
  attemptNumber: number;
  sha: string;
}): Promise<Workspace> {
  const paths = workspacePaths(opts.dataDir, opts.runId, opts.attemptNumber);
  const source = await sourceRepository(opts.dataDir, opts.repository, opts.sha);
  if ((await resolveRevision(source, opts.sha)) === null) {
    throw new GitError(`commit ${opts.sha.slice(0, 12)} is not in ${opts.repository.fullName}`, null, "");
  }
  // A leftover of this very attempt can only come from a worker that died while preparing it.
  if (existsSync(paths.dir)) await removeWorkspace({ dataDir: opts.dataDir, dir: paths.dir, sourceRepo: source });
  await mkdir(dirname(paths.dir), { recursive: true });
  await git(["--git-dir", source, "worktree", "add", "--quiet", "--detach", paths.dir, assertRevision(opts.sha)]);
  await mkdir(paths.artifactsDir, { recursive: true });
  return { dir: paths.dir, artifactsDir: paths.artifactsDir, sourceRepo: source };
}

export async function removeWorkspace(ws: { dataDir: string; dir: string; sourceRepo?: string }): Promise<void> {
  // A worktree's .git file names its repository: "gitdir: <repo>/worktrees/<name>".
  const link = ws.sourceRepo ? null : await readFile(join(ws.dir, ".git"), "utf8").catch(() => null);
  const sourceRepo = ws.sourceRepo ?? /^gitdir: (.+)\/worktrees\/[^/]+\s*$/.exec(link ?? "")?.[1];
  if (sourceRepo) {
    await git(["--git-dir", sourceRepo, "worktree", "remove", "--force", "--force", ws.dir]).catch(() => undefined);
  }
  await rm(ws.dir, { recursive: true, force: true });
  await rm(`${ws.dir}.keep-until`, { force: true });
  if (sourceRepo) await git(["--git-dir", sourceRepo, "worktree", "prune"]).catch(() => undefined);
}

/** Keeps a failed attempt's workspace until `until`; sweepWorkspaces removes it afterwards. */
export async function keepWorkspace(dir: string, until: Date): Promise<void> {
  await writeFile(`${dir}.keep-until`, until.toISOString());
}

/**
 * Removes workspaces whose keep-until passed, and unmarked ones older than `orphanAfterMs` that
 * no active attempt holds (left by a worker that died). `isActive(runId, attemptNumber)` asks
 * the database.
 */
export async function sweepWorkspaces(opts: {
  dataDir: string;
  now: Date;
  orphanAfterMs: number;
  isActive: (runId: string, attemptNumber: number) => Promise<boolean>;
}): Promise<string[]> {
  const root = resolve(opts.dataDir, "workspaces");
  const removed: string[] = [];
  const runs = await readdir(root).catch(() => [] as string[]);
  for (const runId of runs) {
    const entries = await readdir(join(root, runId)).catch(() => [] as string[]);
    for (const entry of entries) {
      const m = /^attempt-(\d+)$/.exec(entry);
      if (!m) continue;
      const dir = join(root, runId, entry);
      const marker = await readFile(`${dir}.keep-until`, "utf8").catch(() => null);
      const expired = marker
        ? new Date(marker.trim()).getTime() <= opts.now.getTime()
        : ((await stat(dir).catch(() => null))?.mtimeMs ?? Infinity) < opts.now.getTime() - opts.orphanAfterMs &&
          !(await opts.isActive(runId, Number(m[1])));
      if (!expired) continue;
      await removeWorkspace({ dataDir: opts.dataDir, dir });
      removed.push(dir);
    }
    // rmdir, never rm -r: it removes the run's folder only if it is still empty, so an attempt
    // of this run being prepared right now (folder made, worktree not yet added) is not wiped.
    await rmdir(join(root, runId)).catch(() => undefined);
  }
  return removed;
}
