import type { GithubClient } from "./client";
import { createPatchCommit, forgeErrorOf, split } from "./patch-commit";
import { ForgeError, type ForgeWriteBackRequest, type ForgeWriteBackResult, writeBackMarker, writeBackTrailer } from "../types";

// open_pr on GitHub: the approved patch becomes a commit on the commit the approver saw
// (target.headSha), a NEW branch points at it (POST /git/refs: GitHub refuses a ref that exists),
// and POST /pulls opens the PR with the body the approver saw plus the hidden write-back marker.
// Each step first looks for what a crashed execution did: a branch whose tip carries this
// write-back's trailer is reused; a PR from that branch carrying the marker is the result.

type Octokit = GithubClient;

async function prOfBranch(octokit: Octokit, req: ForgeWriteBackRequest, branch: string) {
  const { owner, repo } = split(req.target.repository);
  const { data } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "all", per_page: 10 });
  const pr = data[0];
  if (!pr) return null;
  if (!pr.body?.includes(writeBackMarker(req.idempotencyKey))) throw new ForgeError(`branch ${branch} already has pull request #${pr.number}, not opened by this write-back`, "head_moved");
  return { externalRef: `#${pr.number}`, detail: pr.html_url };
}

export async function findGithubOpenPr(octokit: Octokit, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null> {
  if (!req.target.branch) return null;
  return prOfBranch(octokit, req, req.target.branch);
}

/** The new branch's tip when an earlier execution of this write-back created it, else null (a foreign branch is refused). */
async function ourBranch(octokit: Octokit, req: ForgeWriteBackRequest, branch: string): Promise<string | null> {
  const { owner, repo } = split(req.target.repository);
  let tip: string;
  try {
    tip = (await octokit.rest.git.getRef({ owner, repo, ref: `heads/${branch}` })).data.object.sha;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return null;
    throw err;
  }
  const { data: commit } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: tip });
  if (!commit.message.includes(`${writeBackTrailer}: ${req.idempotencyKey}`)) {
    throw new ForgeError(`branch ${branch} already exists on GitHub and is not this write-back's; choose another branch`, "head_moved");
  }
  return tip;
}

export async function openGithubPr(octokit: Octokit, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const branch = req.target.branch;
  const pr = req.openPr;
  const from = req.target.headSha;
  if (!branch || !pr || !from || !req.patch) throw new ForgeError("opening a pull request needs its new branch, base, title, body, the patch and the commit it applies to", "forge_error");
  const { owner, repo } = split(req.target.repository);
  try {
    if (!(await ourBranch(octokit, req, branch))) {
      const commit = await createPatchCommit(octokit, req, from);
      try {
        await octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: commit.sha });
      } catch (err) {
        // 422 "Reference already exists": a racing execution of this write-back created it first.
        if ((err as { status?: number }).status !== 422 || !(await ourBranch(octokit, req, branch))) throw err;
      }
    }
    const found = await prOfBranch(octokit, req, branch);
    if (found) return found;
    try {
      const { data } = await octokit.rest.pulls.create({ owner, repo, head: branch, base: pr.base, title: pr.title, body: `${pr.body.trim()}\n\n${writeBackMarker(req.idempotencyKey)}` });
      return { externalRef: `#${data.number}`, detail: data.html_url };
    } catch (err) {
      // 422 "A pull request already exists": a racing execution opened it first.
      const raced = (err as { status?: number }).status === 422 ? await prOfBranch(octokit, req, branch) : null;
      if (raced) return raced;
      throw err;
    }
  } catch (err) {
    throw forgeErrorOf(err, `open a pull request from ${branch}`);
  }
}
