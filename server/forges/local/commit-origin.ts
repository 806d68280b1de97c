import type { Db } from "@/server/db";
import type { PullRequestRef } from "@/server/domain/ci-events/ci-event";
import { assertRevision, git } from "./git";

// Where a commit the local CI checks comes from, read from the forge itself (real git) and from
// Airlock's pull request records, never from the name a caller gave it. A fork's head lives in
// the base repository only under refs/pull/<n>/head (as on GitHub), so "the check ran on branch
// X" proves nothing: only a branch of the repository (refs/heads/*) that contains the commit
// makes it the repository's own code. A commit that is an open fork pull request's head is a
// fork's, even if a branch contains it too (fail closed); one no branch contains and no pull
// request record places has an unknown origin. Evaluation (evaluation/origin.ts) turns this into
// the run's origin: only "repository" may run trusted.

type LocalCommitOrigin = {
  /** true: a fork's head; false: on a branch of the repository; null: unknown. */
  isFork: boolean | null;
  /** The branch to report: the asked one when it holds the commit, else one that does, else the pull request's head ref. */
  headBranch: string | null;
  /** Open pull requests whose head is this commit, as CI events reference them. */
  pullRequests: PullRequestRef[];
};

/** Branches of the bare repository that contain `sha` (real git: for-each-ref --contains). */
async function branchesContaining(repoPath: string, sha: string): Promise<string[]> {
  const out = await git(["--git-dir", repoPath, "for-each-ref", "--contains", assertRevision(sha), "--format=%(refname)", "refs/heads/"]);
  return out
    .split("\n")
    .filter((line) => line.startsWith("refs/heads/"))
    .map((line) => line.slice("refs/heads/".length));
}

export async function placeLocalCommit(opts: { db: Db; repoPath: string; repositoryId: string; sha: string; askedBranch: string }): Promise<LocalCommitOrigin> {
  const [branches, prs] = await Promise.all([
    branchesContaining(opts.repoPath, opts.sha),
    opts.db.pullRequest.findMany({ where: { repositoryId: opts.repositoryId, headSha: opts.sha, state: "open" }, orderBy: { number: "asc" }, take: 20 }),
  ]);
  const pullRequests: PullRequestRef[] = prs.map((pr) => ({
    number: pr.number,
    url: pr.url,
    headRef: pr.headRef,
    headSha: pr.headSha,
    headRepoFullName: pr.headRepoFullName,
    baseRef: pr.baseRef,
    baseSha: pr.baseSha,
    isFork: pr.isFork,
  }));
  const fork = pullRequests.find((pr) => pr.isFork);
  if (fork) return { isFork: true, headBranch: fork.headRef, pullRequests: [fork] };
  if (branches.length > 0) {
    const headBranch = branches.includes(opts.askedBranch) ? opts.askedBranch : branches[0]!;
    return { isFork: false, headBranch, pullRequests: pullRequests.filter((pr) => pr.headRef === headBranch) };
  }
  return { isFork: null, headBranch: null, pullRequests: [] };
}
