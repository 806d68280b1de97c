// Changed files of a GitHub pull request, looked up when a trigger rule filters on paths and
// Airlock does not know them (GitHub's webhooks carry only a count). A failed lookup leaves them
// unknown, so path-filtered rules do not match (fail closed), and says why on the delivery.
import type { Repository } from "@/server/db";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";
import { listPullRequestFiles, type PullFilesResult } from "@/server/forges/github/pull-files";
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import type { Facts } from "./facts";

export type ChangedFilesLookup = (query: { repository: string; number: number }) => Promise<PullFilesResult>;

export function githubChangedFiles(settings: { token: string | null; baseUrl?: string | null }): ChangedFilesLookup {
  return ({ repository, number }) => listPullRequestFiles({ token: settings.token, baseUrl: settings.baseUrl, repository, number });
}

const DISPATCHING: ReadonlySet<CiEvent["type"]> = new Set(["failed_check", "pr_comment", "pr_labeled", "manual", "check_rerun"]);

/**
 * Fills `facts.changedFiles` from GitHub when it is needed and unknown. Returns a sentence for
 * the delivery's detail when the lookup failed (the path-filtered rules' drop reason), else null.
 */
export async function lookUpChangedFiles(opts: {
  repository: Pick<Repository, "fullName" | "forge">;
  event: CiEvent;
  facts: Facts;
  rules: readonly Pick<TriggerRule, "name" | "kind" | "pathFilters">[];
  lookup: ChangedFilesLookup | null | undefined;
}): Promise<string | null> {
  const { facts } = opts;
  if (!opts.lookup || opts.repository.forge !== "github" || !DISPATCHING.has(opts.event.type)) return null;
  if (facts.changedFiles !== null || facts.pullRequestNumber === null) return null;
  const filtered = opts.rules.filter((r) => r.pathFilters.length > 0);
  if (filtered.length === 0) return null;
  const result = await opts.lookup({ repository: opts.repository.fullName, number: facts.pullRequestNumber });
  if (result.ok) {
    facts.changedFiles = result.files;
    return null;
  }
  const names = filtered.slice(0, 3).map((r) => r.name).join(", ");
  return `changed files unknown, path-filtered rules (${names}${filtered.length > 3 ? ", …" : ""}) cannot match: ${result.reason}`;
}
