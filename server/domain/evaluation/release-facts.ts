// A release's facts for its match keys and readiness gaps (triggers/release-facts.ts), read from
// what each forge really gives:
// - artifacts: the release pipeline's artifacts on the delivery (local forge; a checksum file
//   carries its text) and the release's assets with GitHub's digests (GitHub: no content, so a
//   checksum file's entries are not read, and no images);
// - branches: local forge, every branch of the bare repository that contains the tag's commit
//   (git for-each-ref --contains); GitHub, the one branch the event names (a release's
//   target_commitish, a tag push's base_ref), nothing more;
// - files: local forge, the Chart.yaml and package.json versions at the tag's commit; GitHub: not read.
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import type { Repository } from "@/server/db";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { LocalArtifact } from "@/server/domain/ingest/delivery/local-payload";
import { assertRevision, git } from "@/server/forges/local/git";
import { contentDigest } from "@/server/lib/digest";
import { MAX_CHECKSUM_BYTES, parseChecksums, type ChecksumFile, type ReleaseFacts, type RepositoryVersionFile } from "@/server/domain/triggers/release-facts";

type ReleaseEvent = Extract<DispatchableEvent, { type: "release" }>;

const FULL_SHA = /^[0-9a-f]{40}$/;
const MAX_VERSION_FILES = 20;
const MAX_FILE_BYTES = 256 * 1024;

/** The bare repository of a local-forge repository (its clone URL is a file: URL), else null. */
function localRepoPath(repository: Pick<Repository, "forge" | "cloneUrl">): string | null {
  if (repository.forge !== "local" || !repository.cloneUrl.startsWith("file:")) return null;
  return fileURLToPath(repository.cloneUrl);
}

function checksumsOf(artifacts: readonly LocalArtifact[], origin: string): ChecksumFile[] {
  return artifacts.flatMap((a): ChecksumFile[] => {
    if (typeof a.content === "string") {
      const text = a.content.slice(0, MAX_CHECKSUM_BYTES);
      return [{ name: a.name, entries: parseChecksums(text), unread: null, readDigest: contentDigest(a.content) }];
    }
    if (a.type !== "checksum" && !/(sha256sums|checksums?)(\.txt)?$/i.test(a.name)) return [];
    const unread = origin === "github" ? "GitHub's release event carries each asset's digest, not its content" : "the release pipeline sent it without its content";
    return [{ name: a.name, entries: null, unread, readDigest: null }];
  });
}

async function localBranches(repoPath: string, sha: string): Promise<string[]> {
  const out = await git(["--git-dir", repoPath, "for-each-ref", "--contains", assertRevision(sha), "--format=%(refname:strip=2)", "refs/heads/"], { timeoutMs: 20_000 });
  return out.split("\n").filter(Boolean).slice(0, 200);
}

function versionFileOf(path: string, text: string): RepositoryVersionFile | null {
  try {
    if (path.endsWith("Chart.yaml")) {
      const chart = parseYaml(text) as { name?: unknown; version?: unknown; appVersion?: unknown } | null;
      if (typeof chart?.name !== "string") return null;
      const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : null);
      return { path, kind: "chart", name: chart.name, version: str(chart.version), appVersion: str(chart.appVersion) };
    }
    const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (typeof pkg.name !== "string") return null;
    return { path, kind: "npm", name: pkg.name, version: typeof pkg.version === "string" ? pkg.version : null, appVersion: null };
  } catch {
    return null;
  }
}

async function localVersionFiles(repoPath: string, sha: string): Promise<RepositoryVersionFile[]> {
  const tree = await git(["--git-dir", repoPath, "ls-tree", "-r", "--name-only", assertRevision(sha)], { timeoutMs: 20_000 });
  const paths = tree
    .split("\n")
    .filter((p) => /(^|\/)(Chart\.yaml|package\.json)$/.test(p) && !p.split("/").includes("node_modules"))
    .slice(0, MAX_VERSION_FILES);
  const files: RepositoryVersionFile[] = [];
  for (const path of paths) {
    const text = await git(["--git-dir", repoPath, "cat-file", "blob", `${sha}:${path}`], { timeoutMs: 20_000 });
    const file = text.length <= MAX_FILE_BYTES ? versionFileOf(path, text) : null;
    if (file) files.push(file);
  }
  return files;
}

/** The branch a GitHub event names for the release, when it names one (not a SHA). */
function namedBranch(event: ReleaseEvent): string | null {
  const target = event.targetCommitish?.replace(/^refs\/heads\//, "") ?? null;
  return target && !FULL_SHA.test(target) ? target : null;
}

export async function loadReleaseFacts(opts: { repository: Pick<Repository, "forge" | "cloneUrl">; event: ReleaseEvent; commitSha: string | null; artifacts: readonly LocalArtifact[] }): Promise<ReleaseFacts> {
  const { event, commitSha } = opts;
  const facts: ReleaseFacts = {
    tag: event.tag,
    version: event.version,
    commitSha,
    artifacts: opts.artifacts.map((a) => ({ name: a.name, type: a.type, digest: a.digest ?? null })),
    checksums: checksumsOf(opts.artifacts, event.origin),
    branches: null,
    branchesFrom: commitSha === null ? "the tag's commit is unknown" : "not read",
    files: null,
    filesFrom: "not read",
  };
  if (event.origin === "github") {
    const branch = namedBranch(event);
    facts.branches = branch === null ? null : [branch];
    facts.branchesFrom = branch === null ? "GitHub's event names no branch for this tag" : `GitHub names ${branch}`;
    facts.filesFrom = "the repository's files are read on the local forge only";
    return facts;
  }
  const repoPath = localRepoPath(opts.repository);
  if (repoPath === null) {
    facts.branchesFrom = facts.filesFrom = `${opts.repository.cloneUrl.slice(0, 200)} is no local-forge repository Airlock can read`;
    return facts;
  }
  if (commitSha === null || !FULL_SHA.test(commitSha)) return facts;
  try {
    facts.branches = await localBranches(repoPath, commitSha);
    facts.branchesFrom = `local git: branches containing ${commitSha.slice(0, 12)}`;
    facts.files = await localVersionFiles(repoPath, commitSha);
    facts.filesFrom = `local git: Chart.yaml and package.json at ${commitSha.slice(0, 12)}`;
  } catch (err) {
    // A commit the bare repository does not hold (a tag naming a fork's commit): on no branch.
    const why = (err as Error).message.slice(0, 200);
    facts.branches ??= [];
    facts.branchesFrom = `local git could not read ${commitSha.slice(0, 12)}: ${why}`;
    facts.filesFrom = facts.branchesFrom;
  }
  return facts;
}
