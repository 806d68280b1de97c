import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { assertRevision, git, GitError } from "./git";

// The local forge: one bare git repository per Airlock repository under
// `<dataDir>/forge/<owner>/<name>.git`. Commits are made in a throwaway clone and pushed, the
// way a developer would, so the bare repository only ever changes through git itself.

const segment = /^[A-Za-z0-9._-]{1,100}$/;

/** `<dataDir>/forge/<owner>/<name>.git`; refuses names that could escape the forge folder. */
export function bareRepoPath(dataDir: string, fullName: string): string {
  const [owner, name, ...rest] = fullName.split("/");
  if (!owner || !name || rest.length > 0 || ![owner, name].every((s) => segment.test(s) && s !== "." && s !== "..")) {
    throw new GitError(`"${fullName}" is not an owner/name repository name`, null, "");
  }
  return resolve(dataDir, "forge", owner, `${name}.git`);
}

export async function ensureBareRepo(dataDir: string, fullName: string, defaultBranch = "main") {
  const path = bareRepoPath(dataDir, fullName);
  if (existsSync(join(path, "HEAD"))) return { path, created: false };
  await mkdir(dirname(path), { recursive: true });
  await git(["init", "--quiet", "--bare", `--initial-branch=${assertRevision(defaultBranch)}`, path]);
  return { path, created: true };
}

/** The commit a branch (or any revision) points at, or null when it does not exist. */
export async function resolveRevision(repoPath: string, rev: string): Promise<string | null> {
  try {
    return (await git(["--git-dir", repoPath, "rev-parse", "--verify", "--quiet", `${assertRevision(rev)}^{commit}`])).trim();
  } catch (err) {
    if (err instanceof GitError && err.exitCode !== null) return null;
    throw err;
  }
}

/** What a use case takes to read a branch's head: branchHead bound to a data directory (tests pass their own). */
export type BranchHead = (fullName: string, branch: string) => Promise<string | null>;

/**
 * The commit a branch of a local-forge repository points at: refs/heads only, so a tag or a
 * commit id is no branch; null when there is no such branch or the name is no repository's.
 */
export async function branchHead(dataDir: string, fullName: string, branch: string): Promise<string | null> {
  try {
    return await resolveRevision(bareRepoPath(dataDir, fullName), `refs/heads/${branch}`);
  } catch (err) {
    if (err instanceof GitError) return null;
    throw err;
  }
}

/**
 * Commits `files` (path -> content, on top of the branch's tip when it exists) and pushes the
 * commit to the branch. Returns the new commit's sha.
 */
export async function commitFiles(opts: {
  repoPath: string;
  branch: string;
  files: Record<string, string>;
  message: string;
  /** Fixed author/commit time, so the demo's commit ids are reproducible. */
  date?: Date;
}): Promise<string> {
  const branch = assertRevision(opts.branch);
  const work = await mkdtemp(join(tmpdir(), "airlock-commit-"));
  try {
    await git(["clone", "--quiet", opts.repoPath, work]);
    const exists = (await resolveRevision(opts.repoPath, branch)) !== null;
    await git(exists ? ["checkout", "--quiet", branch] : ["checkout", "--quiet", "--orphan", branch], { cwd: work });
    for (const [path, content] of Object.entries(opts.files)) {
      const target = resolve(work, path);
      if (!target.startsWith(`${work}/`)) throw new GitError(`file path "${path}" leaves the repository`, null, "");
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    await git(["add", "--all"], { cwd: work });
    const date = opts.date?.toISOString();
    await git(["commit", "--quiet", "--allow-empty", "-m", opts.message], {
      cwd: work,
      env: date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {},
    });
    await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], { cwd: work });
    return (await git(["rev-parse", "HEAD"], { cwd: work })).trim();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A fresh clone of the repository checked out (detached) at `sha`, in `dir`. */
export async function checkoutAt(repoPath: string, sha: string, dir: string): Promise<void> {
  await git(["clone", "--quiet", "--no-checkout", repoPath, dir]);
  await git(["checkout", "--quiet", "--detach", assertRevision(sha)], { cwd: dir });
}
