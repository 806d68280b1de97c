import { Octokit } from "@octokit/rest";
import { ForgeError } from "../types";

// Reruns a failed check on GitHub for triage's "rerun once": a workflow run's failed jobs, or an
// external check run (re-requested from its app). Not a write-back: no agent output is involved,
// the policy decided it.

export type GithubRerunTarget = { repository: string; via: string; externalId: string };

export async function rerunGithubCheck(opts: { token: string; baseUrl?: string; target: GithubRerunTarget }): Promise<{ detail: string }> {
  const [owner, repo] = opts.target.repository.split("/");
  if (!owner || !repo) throw new ForgeError(`"${opts.target.repository}" is not owner/name`, "forge_error");
  const id = Number(opts.target.externalId);
  if (!Number.isSafeInteger(id) || id <= 0) throw new ForgeError(`"${opts.target.externalId}" is not a GitHub id`, "forge_error");
  const octokit = new Octokit({ auth: opts.token, ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}) });
  try {
    if (opts.target.via === "check_run") {
      await octokit.rest.checks.rerequestRun({ owner, repo, check_run_id: id });
      return { detail: `check run ${id} re-requested` };
    }
    if (opts.target.via === "workflow_run" || opts.target.via === "workflow_job") {
      await octokit.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: id });
      return { detail: `failed jobs of workflow run ${id} rerun` };
    }
  } catch (err) {
    const e = err as { status?: number; message?: string };
    throw new ForgeError(`GitHub refused the rerun: ${e.status ?? ""} ${e.message ?? String(err)}`.trim(), e.status === 404 ? "not_found" : "forge_error");
  }
  throw new ForgeError(`Airlock cannot rerun a ${opts.target.via} on GitHub`, "unsupported");
}
