import { Octokit } from "@octokit/rest";

// The files a GitHub pull request changes (pulls.listFiles), for trigger rules with path filters.
// Paginated 100 at a time and bounded: GitHub itself lists at most 3,000 files, and a listing
// cut short by the bound is reported as incomplete rather than passed off as the whole list.

export type PullFilesResult =
  | { ok: true; files: string[] }
  | { ok: false; reason: string };

export type PullFilesOptions = {
  token: string | null;
  baseUrl?: string | null;
  repository: string;
  number: number;
  /** Most files to read (default 3,000, GitHub's own cap). */
  maxFiles?: number;
  /** Per-request timeout (default 5 s): evaluation must not hang on GitHub. */
  timeoutMs?: number;
};

const PER_PAGE = 100;

export async function listPullRequestFiles(opts: PullFilesOptions): Promise<PullFilesResult> {
  const [owner, repo] = opts.repository.split("/");
  if (!owner || !repo) return { ok: false, reason: `"${opts.repository}" is not owner/name` };
  if (!opts.token) return { ok: false, reason: "no GITHUB_TOKEN is configured to read the pull request's files" };
  const maxFiles = opts.maxFiles ?? 3000;
  const octokit = new Octokit({ auth: opts.token, ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}), request: { timeout: opts.timeoutMs ?? 5_000 } });
  const files: string[] = [];
  for (let page = 1; files.length < maxFiles; page++) {
    let data: { filename: string; previous_filename?: string; status: string }[];
    try {
      ({ data } = await octokit.rest.pulls.listFiles({ owner, repo, pull_number: opts.number, per_page: PER_PAGE, page }));
    } catch (err) {
      const e = err as { status?: number; message?: string };
      return { ok: false, reason: `GitHub did not list the files of #${opts.number}: ${e.status ?? ""} ${e.message ?? String(err)}`.replace(/\s+/g, " ").trim() };
    }
    for (const f of data) {
      files.push(f.filename);
      // A rename touches both paths: a filter on the old location must see it too.
      if (f.status === "renamed" && f.previous_filename) files.push(f.previous_filename);
    }
    if (data.length < PER_PAGE) return { ok: true, files: [...new Set(files)] };
  }
  return { ok: false, reason: `#${opts.number} changes more than ${maxFiles} files; path filters cannot be checked against a partial list` };
}
