import { githubClient, type GithubClient } from "./client";
import { createPatchCommit, forgeErrorOf, split } from "./patch-commit";
import { findGithubOpenPr, openGithubPr } from "./open-pr";
import { findGithubRelease, publishGithubRelease } from "./publish-release";
import { type Forge, ForgeError, type LabelChange, type WorkflowRunState, type ForgeWriteBackRequest, type ForgeWriteBackResult, writeBackMarker, writeBackTrailer } from "../types";

// GitHub write-backs through Octokit. A patch becomes a commit through the git data API: the
// touched files are read at the branch tip, the patch is applied to them with `git apply` in a
// scratch folder, then blobs, a tree on the tip's tree, a commit whose parent is the tip, and a
// non-forced ref update (GitHub refuses it when the branch moved). Comments and reviews carry
// the write-back marker; reconciliation finds them (or the commit by its trailer) by listing.

export type GithubForgeOptions =
  | { token: string; baseUrl?: string; throttle?: boolean }
  /** GitHub App: a client per repository, with an installation token scoped to it (writes appear as the app's bot). */
  | { clientFor: (repository: string) => GithubClient };

export { patchPaths } from "./patch-commit";

export function createGithubForge(opts: GithubForgeOptions): Forge {
  let shared: GithubClient | null = null;
  const clientFor = (repository: string): GithubClient => {
    if ("clientFor" in opts) return opts.clientFor(repository);
    shared ??= githubClient({ auth: { kind: "token", token: opts.token }, baseUrl: opts.baseUrl, throttle: opts.throttle });
    return shared;
  };

  async function branchHead(repository: string, branch: string): Promise<string | null> {
    const octokit = clientFor(repository);
    try {
      const { data } = await octokit.rest.git.getRef({ ...split(repository), ref: `heads/${branch}` });
      return data.object.sha;
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw forgeErrorOf(err, `read ${branch}`);
    }
  }

  /** Every page of a list, stopping early once `found` matches (reconciliation lookups). */
  async function findInPages<T>(iterator: AsyncIterable<{ data: T[] }>, found: (item: T) => boolean, maxPages = 20): Promise<T | null> {
    let pages = 0;
    for await (const page of iterator) {
      const hit = page.data.find(found);
      if (hit) return hit;
      if (++pages >= maxPages) break;
    }
    return null;
  }

  async function commitPatch(req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
    const octokit = clientFor(req.target.repository);
    const { owner, repo } = split(req.target.repository);
    const branch = req.target.branch;
    if (!branch || !req.patch) throw new ForgeError("a commit needs a branch and a patch", "forge_error");
    const tip = await branchHead(req.target.repository, branch);
    // GitHub answers 404 alike for a missing branch, a missing repository and one the token cannot see.
    if (!tip) throw new ForgeError(`GitHub refused to read ${branch}: 404 Not Found (no branch ${branch} in ${req.target.repository}, or the token cannot see the repository)`, "not_found");
    if (req.target.headSha && req.target.headSha !== tip) throw new ForgeError(`branch ${branch} moved from ${req.target.headSha.slice(0, 12)} to ${tip.slice(0, 12)}`, "head_moved");
    try {
      const commit = await createPatchCommit(octokit, req, tip);
      await octokit.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: commit.sha, force: false });
      return { externalRef: commit.sha, detail: commit.html_url };
    } catch (err) {
      throw forgeErrorOf(err, `commit to ${branch}`);
    }
  }

  async function setLabels(repository: string, prNumber: number, change: LabelChange): Promise<{ labels: string[] }> {
    const octokit = clientFor(repository);
    const { owner, repo } = split(repository);
    const add = change.add.filter((l) => !change.remove.includes(l));
    let labels: string[] | null = null;
    for (const name of change.remove) {
      try {
        const { data } = await octokit.rest.issues.removeLabel({ owner, repo, issue_number: prNumber, name });
        labels = data.map((l) => l.name);
      } catch (err) {
        // GitHub answers 404 "Label does not exist" when the PR lacks it: already removed.
        if ((err as { status?: number }).status !== 404) throw forgeErrorOf(err, `remove the label ${name} from #${prNumber}`);
        labels = null;
      }
    }
    try {
      if (add.length > 0) {
        const { data } = await octokit.rest.issues.addLabels({ owner, repo, issue_number: prNumber, labels: [...add] });
        return { labels: data.map((l) => l.name) };
      }
      if (labels) return { labels };
      const { data } = await octokit.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: prNumber, per_page: 100 });
      return { labels: data.map((l) => l.name) };
    } catch (err) {
      throw forgeErrorOf(err, `label #${prNumber}`);
    }
  }

  async function requestReview(repository: string, prNumber: number, reviewers: readonly string[]): Promise<{ detail: string }> {
    const octokit = clientFor(repository);
    if (reviewers.length === 0) throw new ForgeError("a review request on GitHub names at least one reviewer", "forge_error");
    try {
      // Requesting a reviewer already requested changes nothing: GitHub keeps one request each.
      const { data } = await octokit.rest.pulls.requestReviewers({ ...split(repository), pull_number: prNumber, reviewers: [...reviewers] });
      return { detail: `review requested from ${(data.requested_reviewers ?? []).map((u) => u.login).join(", ")} on ${data.html_url}` };
    } catch (err) {
      throw forgeErrorOf(err, `request a review of #${prNumber}`);
    }
  }

  async function workflowRun(repository: string, runId: string, attempt?: number): Promise<WorkflowRunState | null> {
    const id = Number(runId);
    if (!Number.isSafeInteger(id) || id <= 0) throw new ForgeError(`"${runId}" is not a GitHub workflow run id`, "forge_error");
    try {
      const octokit = clientFor(repository);
      const { data } =
        attempt === undefined
          ? await octokit.rest.actions.getWorkflowRun({ ...split(repository), run_id: id })
          : await octokit.rest.actions.getWorkflowRunAttempt({ ...split(repository), run_id: id, attempt_number: attempt });
      return { attempt: data.run_attempt ?? 1, status: data.status ?? "queued", conclusion: data.conclusion ?? null, url: data.html_url ?? null };
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw forgeErrorOf(err, `read workflow run ${runId}`);
    }
  }

  return {
    kind: "github",
    branchHead,
    setLabels,
    requestReview,
    workflowRun,
    async findWriteBack(req) {
      const { owner, repo } = split(req.target.repository);
      const octokit = clientFor(req.target.repository);
      try {
        if ((req.kind === "push_commits" || req.kind === "update_pr_branch") && req.target.branch) {
          // Only commits on the branch count: a commit created before a crash but never reached
          // by the ref is not a write-back, and the retry makes (and pushes) a new one.
          const hit = await findInPages(
            octokit.paginate.iterator(octokit.rest.repos.listCommits, { owner, repo, sha: req.target.branch, per_page: 100 }),
            (c) => c.commit.message.includes(`${writeBackTrailer}: ${req.idempotencyKey}`),
            5,
          );
          return hit ? { externalRef: hit.sha, detail: hit.html_url } : null;
        }
        if (req.kind === "comment" && req.target.prNumber) {
          const hit = await findInPages(octokit.paginate.iterator(octokit.rest.issues.listComments, { owner, repo, issue_number: req.target.prNumber, per_page: 100 }), (c) =>
            Boolean(c.body?.includes(writeBackMarker(req.idempotencyKey))),
          );
          return hit ? { externalRef: String(hit.id), detail: hit.html_url } : null;
        }
        if ((req.kind === "review" || req.kind === "approve_review") && req.target.prNumber) {
          const hit = await findInPages(octokit.paginate.iterator(octokit.rest.pulls.listReviews, { owner, repo, pull_number: req.target.prNumber, per_page: 100 }), (r) =>
            Boolean(r.body?.includes(writeBackMarker(req.idempotencyKey))),
          );
          return hit ? { externalRef: String(hit.id), detail: hit.html_url } : null;
        }
        if (req.kind === "open_pr") return findGithubOpenPr(octokit, req);
        if (req.kind === "publish_release") return findGithubRelease(octokit, req);
        if (req.kind === "roll_back" && req.rollBack?.mode === "revert" && req.target.branch) {
          const hit = await findInPages(
            octokit.paginate.iterator(octokit.rest.repos.listCommits, { owner, repo, sha: req.target.branch, per_page: 100 }),
            (c) => c.commit.message.includes(`${writeBackTrailer}: ${req.idempotencyKey}`),
            5,
          );
          return hit ? { externalRef: hit.sha, detail: hit.html_url } : null;
        }
        if (req.kind === "rerun_workflow" || (req.kind === "roll_back" && req.rollBack?.mode === "rerun_last_good")) {
          // A rerun carries no marker. With the attempt pinned before the call, a later attempt
          // is the rerun done (finished or not). Without it, a run queued or running again is
          // what the rerun asked for: requesting it once more would be refused by GitHub anyway.
          const runId = Number(req.target.check);
          if (!Number.isInteger(runId) || runId <= 0) return null;
          const { data } = await octokit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
          const attempt = data.run_attempt ?? 1;
          const done = req.rerunAttemptBefore !== undefined ? attempt > req.rerunAttemptBefore : data.status !== "completed" && attempt > 1;
          // A roll-back names the good deploy's run, as its execution does; a rerun names the attempt too.
          return done ? { externalRef: req.kind === "roll_back" ? String(runId) : `${runId}#${attempt}`, detail: `workflow run ${runId} attempt ${attempt} ${data.status}` } : null;
        }
        return null;
      } catch (err) {
        throw forgeErrorOf(err, "look up an earlier write-back");
      }
    },
    async executeWriteBack(req) {
      const { owner, repo } = split(req.target.repository);
      const octokit = clientFor(req.target.repository);
      const body = `${req.message.trim()}\n\n${writeBackMarker(req.idempotencyKey)}`;
      switch (req.kind) {
        case "push_commits":
        case "update_pr_branch":
          return commitPatch(req);
        case "comment": {
          if (!req.target.prNumber) throw new ForgeError("a comment needs a pull request", "forge_error");
          try {
            const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: req.target.prNumber, body });
            return { externalRef: String(data.id), detail: data.html_url };
          } catch (err) {
            throw forgeErrorOf(err, "comment");
          }
        }
        case "review":
        case "approve_review": {
          if (!req.target.prNumber) throw new ForgeError("a review needs a pull request", "forge_error");
          try {
            // Only approve_review approves; a review comments or requests changes, as approved.
            const event = req.kind === "approve_review" ? "APPROVE" : req.reviewEvent === "REQUEST_CHANGES" ? "REQUEST_CHANGES" : "COMMENT";
            const { data } = await octokit.rest.pulls.createReview({ owner, repo, pull_number: req.target.prNumber, body, event });
            return { externalRef: String(data.id), detail: data.html_url };
          } catch (err) {
            throw forgeErrorOf(err, "review");
          }
        }
        case "open_pr":
          return openGithubPr(octokit, req);
        case "publish_release":
          return publishGithubRelease(octokit, req);
        case "roll_back": {
          if (req.rollBack?.mode === "revert") return commitPatch(req);
          // The last good deploy succeeded: all of its workflow run runs again (it has no failed jobs).
          const runId = Number(req.target.check);
          if (!Number.isInteger(runId) || runId <= 0) throw new ForgeError("a rerun needs the workflow run id as its check", "forge_error");
          try {
            await octokit.rest.actions.reRunWorkflow({ owner, repo, run_id: runId });
            return { externalRef: String(runId), detail: `workflow run ${runId} (the last good deploy) rerun requested` };
          } catch (err) {
            throw forgeErrorOf(err, "rerun the last good deploy");
          }
        }
        case "rerun_workflow": {
          const runId = Number(req.target.check);
          if (!Number.isInteger(runId) || runId <= 0) throw new ForgeError("a rerun needs the workflow run id as its check", "forge_error");
          const next = req.rerunAttemptBefore !== undefined ? `#${req.rerunAttemptBefore + 1}` : "";
          try {
            // Rerun from the failed step as far as GitHub can: the one failed job, else every failed job.
            if (req.rerunJobId) {
              const jobId = Number(req.rerunJobId);
              if (!Number.isSafeInteger(jobId) || jobId <= 0) throw new ForgeError(`"${req.rerunJobId}" is not a GitHub job id`, "forge_error");
              await octokit.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: jobId });
              return { externalRef: `${runId}${next}`, detail: `job ${jobId} of workflow run ${runId} rerun requested` };
            }
            await octokit.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId });
            return { externalRef: `${runId}${next}`, detail: `failed jobs of workflow run ${runId} rerun requested` };
          } catch (err) {
            throw forgeErrorOf(err, "rerun the workflow");
          }
        }
        default:
          throw new ForgeError(`Airlock does not ${req.kind.replaceAll("_", " ")} on GitHub`, "unsupported");
      }
    },
  };
}
