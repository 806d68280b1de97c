import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db, Tx } from "@/server/db";
import { type ForgeWriteBackRequest, type ForgeWriteBackResult, ForgeError, commitMessage, writeBackMarker, writeBackTrailer } from "../types";
import { assertRevision, git, GitError } from "./git";
import { bareRepoPath, resolveRevision } from "./repositories";

// open_pr on the local forge, with real git: the approved patch is committed on the commit the
// approver saw (target.headSha, the run's head) and pushed to a NEW branch (a lease that the branch
// does not exist yet), then Airlock's PullRequest record is created for it, its body carrying the
// write-back marker. Each step looks first for what an earlier, crashed execution did: a branch
// whose tip carries this write-back's trailer is reused, a PR record of that branch carrying the
// marker is the result. So a crash anywhere is finished, never redone.

export type LocalOpenPrOptions = { db: Db; dataDir: string };

export const localPrAuthor = "airlock[bot]";

async function tipWithTrailer(repoPath: string, branch: string, key: string): Promise<string | null> {
  const tip = await resolveRevision(repoPath, branch);
  if (!tip) return null;
  const message = await git(["--git-dir", repoPath, "log", "-1", "--format=%B", tip]);
  if (!message.includes(`${writeBackTrailer}: ${key}`)) {
    throw new ForgeError(`branch ${branch} already exists in the repository and is not this write-back's; choose another branch`, "head_moved");
  }
  return tip;
}

async function pushNewBranch(repoPath: string, req: ForgeWriteBackRequest, branch: string): Promise<string> {
  const from = req.target.headSha;
  if (!from || !req.patch) throw new ForgeError("opening a pull request needs the approved patch and the commit it applies to", "forge_error");
  assertRevision(from);
  const work = await mkdtemp(join(tmpdir(), "airlock-open-pr-"));
  try {
    await git(["clone", "--quiet", "--no-checkout", repoPath, work]);
    try {
      await git(["checkout", "--quiet", "-b", branch, from], { cwd: work });
    } catch (err) {
      throw new ForgeError(`commit ${from.slice(0, 12)} is not in ${req.target.repository}: ${err instanceof GitError ? err.stderr.trim().slice(0, 500) : String(err)}`, "not_found");
    }
    try {
      await git(["apply", "--index", "--whitespace=nowarn", "-"], { cwd: work, input: req.patch });
    } catch (err) {
      const stderr = err instanceof GitError ? err.stderr.trim() : (err as Error).message;
      throw new ForgeError(`the patch does not apply at ${from.slice(0, 12)}: ${stderr.slice(0, 1000)}`, "patch_does_not_apply");
    }
    await git(["commit", "--quiet", "-F", "-"], { cwd: work, input: commitMessage(req) });
    const sha = (await git(["rev-parse", "HEAD"], { cwd: work })).trim();
    try {
      // An empty lease: the push is refused if someone created the branch meanwhile.
      await git(["push", "--quiet", "--porcelain", `--force-with-lease=refs/heads/${branch}:`, "origin", `HEAD:refs/heads/${branch}`], { cwd: work });
    } catch (err) {
      const stderr = err instanceof GitError ? err.stderr.trim() : (err as Error).message;
      throw new ForgeError(`push of the new branch ${branch} refused (it exists now?): ${stderr.slice(0, 1000)}`, "head_moved");
    }
    return sha;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function findPr(db: Db | Tx, repository: string, branch: string, key: string) {
  const pr = await db.pullRequest.findFirst({ where: { repository: { fullName: repository }, headRef: branch }, orderBy: { number: "desc" }, select: { number: true, body: true, headSha: true } });
  if (!pr) return null;
  if (!pr.body.includes(writeBackMarker(key))) throw new ForgeError(`branch ${branch} already has pull request #${pr.number}, not opened by this write-back`, "head_moved");
  return pr;
}

const resultOf = (pr: { number: number; headSha: string }, branch: string, reconciled: boolean): ForgeWriteBackResult => ({
  externalRef: `#${pr.number}`,
  detail: `pull request #${pr.number} from ${branch} (commit ${pr.headSha.slice(0, 12)})${reconciled ? " (found by its write-back marker)" : ""}`,
});

export async function findLocalOpenPr(opts: LocalOpenPrOptions, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null> {
  const branch = req.target.branch;
  if (!branch) return null;
  const pr = await findPr(opts.db, req.target.repository, branch, req.idempotencyKey);
  return pr ? resultOf(pr, branch, true) : null;
}

export async function openLocalPr(opts: LocalOpenPrOptions, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const branch = req.target.branch;
  const pr = req.openPr;
  if (!branch || !pr) throw new ForgeError("opening a pull request needs its new branch, base, title and body", "forge_error");
  assertRevision(branch);
  assertRevision(pr.base);
  const repoPath = bareRepoPath(opts.dataDir, req.target.repository);
  const repo = await opts.db.repository.findUnique({ where: { fullName: req.target.repository }, select: { id: true } });
  if (!repo) throw new ForgeError(`no repository ${req.target.repository}`, "not_found");
  const baseSha = await resolveRevision(repoPath, pr.base);
  if (!baseSha) throw new ForgeError(`the base branch ${pr.base} does not exist in ${req.target.repository}`, "not_found");
  let sha = await tipWithTrailer(repoPath, branch, req.idempotencyKey);
  if (!sha) {
    try {
      sha = await pushNewBranch(repoPath, req, branch);
    } catch (err) {
      // A racing execution of this write-back pushed first: its commit is as good as ours.
      if (!(err instanceof ForgeError) || err.reason !== "head_moved") throw err;
      // It may still hold the ref's lock: look for its branch a few times.
      for (let i = 0; i < 20 && !sha; i++) {
        sha = await tipWithTrailer(repoPath, branch, req.idempotencyKey);
        if (!sha) await new Promise((r) => setTimeout(r, 50));
      }
      if (!sha) throw err;
    }
  }
  const tip = sha;
  // Under a per-repository lock: the PR of this branch is looked up once more (a racing execution
  // may have opened it), and two PRs opened at once get two numbers.
  const created = await opts.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`local-pr:${repo.id}`}))`;
    const found = await findPr(tx, req.target.repository, branch, req.idempotencyKey);
    if (found) return { ...found, reconciled: true };
    const last = await tx.pullRequest.aggregate({ where: { repositoryId: repo.id }, _max: { number: true } });
    const made = await tx.pullRequest.create({
      data: {
        repositoryId: repo.id,
        number: (last._max.number ?? 0) + 1,
        title: pr.title,
        body: `${pr.body.trim()}\n\n${writeBackMarker(req.idempotencyKey)}`,
        author: localPrAuthor,
        headRef: branch,
        headSha: tip,
        baseRef: pr.base,
        baseSha,
        state: "open",
      },
      select: { number: true, headSha: true },
    });
    return { ...made, reconciled: false };
  });
  return resultOf(created, branch, created.reconciled);
}
