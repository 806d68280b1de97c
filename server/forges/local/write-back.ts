import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAtomically } from "@/server/lib/write-atomically";
import type { Db } from "@/server/db";
import { type Forge, ForgeError, type LabelChange, type ForgeWriteBackRequest, type ForgeWriteBackResult, commitMessage, writeBackMarker, writeBackTrailer } from "../types";
import { assertRevision, git, GitError } from "./git";
import { runLocalCheck } from "./local-ci";
import { findLocalOpenPr, openLocalPr } from "./open-pr";
import { findLocalRelease, publishLocalRelease } from "./publish-release";
import { bareRepoPath, resolveRevision } from "./repositories";

// The local forge's write-backs, with real git. A patch is applied in a throwaway clone on the
// target branch, committed with the run, approval and write-back ids as trailers, and pushed to
// the bare repository only if the branch still points at the head the approver saw (an explicit
// --force-with-lease=<ref>:<expected>, and a plain fast-forward otherwise). Comments and reviews
// are JSON files beside the bare repository (`<name>.pr/<number>/`), each carrying its marker.
// A rerun runs the local CI again, linked to the run (`triggeredByRunId`).

export type LocalForgeOptions = {
  db: Db;
  dataDir: string;
  ciTimeoutMs: number;
  toolchainNodeModules?: string | null;
};

type StoredNote = { kind: string; key: string; body: string; prNumber: number | null; createdAt: string; id: string; reviewEvent?: "COMMENT" | "REQUEST_CHANGES" | "APPROVE" };

/** A review's event as the PR record's review state (the states a GitHub review reports). */
const reviewStateOf = { COMMENT: "commented", REQUEST_CHANGES: "changes_requested", APPROVE: "approved" } as const;

function notesDir(dataDir: string, repository: string, prNumber: number | undefined): string {
  return join(`${bareRepoPath(dataDir, repository).replace(/\.git$/, "")}.pr`, String(prNumber ?? "none"));
}

function keyFileName(key: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(key)) throw new ForgeError(`invalid write-back key "${key}"`, "forge_error");
  return `${key}.json`;
}

async function findCommit(repoPath: string, key: string): Promise<string | null> {
  const out = await git(["--git-dir", repoPath, "log", "--all", "--fixed-strings", `--grep=${writeBackTrailer}: ${key}`, "--format=%H"]);
  return out.split("\n").find((l) => l.trim().length > 0)?.trim() ?? null;
}

async function pushPatch(repoPath: string, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const branch = req.target.branch;
  if (!branch) throw new ForgeError("a commit needs a target branch", "forge_error");
  if (!req.patch) throw new ForgeError("a commit needs a patch", "forge_error");
  assertRevision(branch);
  const tip = await resolveRevision(repoPath, branch);
  if (!tip) throw new ForgeError(`branch ${branch} does not exist in ${req.target.repository}`, "not_found");
  const expected = req.target.headSha;
  if (expected && tip !== expected) {
    throw new ForgeError(`branch ${branch} moved from ${expected.slice(0, 12)} to ${tip.slice(0, 12)} since the approval`, "head_moved");
  }
  const work = await mkdtemp(join(tmpdir(), "airlock-writeback-"));
  try {
    await git(["clone", "--quiet", "--branch", branch, repoPath, work]);
    try {
      await git(["apply", "--index", "--whitespace=nowarn", "-"], { cwd: work, input: req.patch });
    } catch (err) {
      const stderr = err instanceof GitError ? err.stderr.trim() : (err as Error).message;
      throw new ForgeError(`the patch does not apply to ${branch} at ${tip.slice(0, 12)}: ${stderr.slice(0, 1000)}`, "patch_does_not_apply");
    }
    await git(["commit", "--quiet", "-F", "-"], { cwd: work, input: commitMessage(req) });
    const sha = (await git(["rev-parse", "HEAD"], { cwd: work })).trim();
    try {
      await git(["push", "--quiet", "--porcelain", `--force-with-lease=refs/heads/${branch}:${tip}`, "origin", `HEAD:refs/heads/${branch}`], { cwd: work });
    } catch (err) {
      const stderr = err instanceof GitError ? err.stderr.trim() : (err as Error).message;
      throw new ForgeError(`push to ${branch} refused (the branch moved?): ${stderr.slice(0, 1000)}`, "head_moved");
    }
    return { externalRef: sha, detail: `commit ${sha.slice(0, 12)} on ${branch}` };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function writeNote(dir: string, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const id = `${req.kind}-${Date.now().toString(36)}-${req.idempotencyKey.slice(-8)}`;
  await storeNote(dir, { kind: req.kind, key: req.idempotencyKey, message: req.message, prNumber: req.target.prNumber ?? null, createdAt: new Date(), id, reviewEvent: reviewEventOf(req) });
  return { externalRef: id, detail: `${req.kind} on PR #${req.target.prNumber ?? "?"}` };
}

type NoteInput = { kind: string; key: string; message: string; prNumber: number | null; createdAt: Date; id: string; reviewEvent?: StoredNote["reviewEvent"] };

async function storeNote(dir: string, n: NoteInput): Promise<void> {
  await mkdir(dir, { recursive: true });
  const note: StoredNote = {
    kind: n.kind,
    key: n.key,
    body: `${n.message.trim()}\n\n${writeBackMarker(n.key)}`,
    prNumber: n.prNumber,
    createdAt: n.createdAt.toISOString(),
    id: n.id,
    ...(n.reviewEvent ? { reviewEvent: n.reviewEvent } : {}),
  };
  await writeAtomically(join(dir, keyFileName(n.key)), JSON.stringify(note));
}

/**
 * A note on a local pull request's conversation exactly as the comment executor stores it, for
 * the demo seed: its executed comments name notes (their external refs) that must exist there.
 */
export async function storeLocalNote(dataDir: string, repository: string, note: NoteInput): Promise<void> {
  await storeNote(notesDir(dataDir, repository, note.prNumber ?? undefined), note);
}

function reviewEventOf(req: ForgeWriteBackRequest): StoredNote["reviewEvent"] {
  if (req.kind === "approve_review") return "APPROVE";
  if (req.kind === "review") return req.reviewEvent === "REQUEST_CHANGES" ? "REQUEST_CHANGES" : "COMMENT";
  return undefined;
}

async function findNote(dir: string, key: string): Promise<ForgeWriteBackResult | null> {
  const file = join(dir, keyFileName(key));
  if (!existsSync(file)) return null;
  const note = JSON.parse(await readFile(file, "utf8")) as StoredNote;
  return note.body.includes(writeBackMarker(key)) ? { externalRef: note.id } : null;
}

/** Comments and reviews on a local pull request, oldest first (the local forge's PR conversation). */
export async function listLocalNotes(dataDir: string, repository: string, prNumber: number): Promise<StoredNote[]> {
  const dir = notesDir(dataDir, repository, prNumber);
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json"));
  const notes = await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), "utf8")) as StoredNote));
  return notes.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export function createLocalForge(opts: LocalForgeOptions): Forge {
  const rerunsDir = (repository: string) => join(`${bareRepoPath(opts.dataDir, repository).replace(/\.git$/, "")}.reruns`);

  async function rerun(req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
    const repo = await opts.db.repository.findUnique({ where: { fullName: req.target.repository }, select: { id: true, checkCommand: true } });
    if (!repo) throw new ForgeError(`no repository ${req.target.repository}`, "not_found");
    // Checked before the marker: the check command may be removed after the rerun was approved.
    // A ForgeError is recorded once as the write-back's failure (a retried job would fail again).
    if (!repo.checkCommand) throw new ForgeError(`${req.target.repository} has no check command configured, so the local CI has nothing to rerun (set one on the repository's settings, then retry)`, "unsupported");
    const dir = rerunsDir(req.target.repository);
    await mkdir(dir, { recursive: true });
    const file = join(dir, keyFileName(req.idempotencyKey));
    await writeFile(file, JSON.stringify({ key: req.idempotencyKey, pipelineId: null }));
    const result = await runLocalCheck({
      db: opts.db,
      dataDir: opts.dataDir,
      repositoryId: repo.id,
      branch: req.target.branch,
      // A roll-back reruns the last good deploy at its own commit.
      ...(req.rollBack?.mode === "rerun_last_good" ? { sha: req.rollBack.goodSha } : {}),
      triggeredByRunId: req.runId,
      timeoutMs: opts.ciTimeoutMs,
      toolchainNodeModules: opts.toolchainNodeModules ?? null,
    });
    await writeFile(file, JSON.stringify({ key: req.idempotencyKey, pipelineId: result.pipelineId, externalId: result.externalId }));
    return { externalRef: result.externalId, detail: `local CI ${result.externalId}: ${result.conclusion}` };
  }

  async function findRerun(req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null> {
    const file = join(rerunsDir(req.target.repository), keyFileName(req.idempotencyKey));
    if (!existsSync(file)) return null;
    const saved = JSON.parse(await readFile(file, "utf8")) as { externalId?: string };
    if (saved.externalId) return { externalRef: saved.externalId };
    // Started but not noted: the pipeline the check created after the marker, if any.
    const since = (await stat(file)).mtime;
    const pipeline = await opts.db.pipeline.findFirst({
      where: { triggeredByRunId: req.runId, event: "rerun", createdAt: { gte: new Date(since.getTime() - 1000) } },
      orderBy: { createdAt: "asc" },
      select: { externalId: true },
    });
    return pipeline ? { externalRef: pipeline.externalId } : null;
  }

  /** The local forge's pull requests are Airlock's records: one atomic update, order kept, no duplicates. */
  async function setLabels(repository: string, prNumber: number, change: LabelChange): Promise<{ labels: string[] }> {
    const add = change.add.filter((l) => !change.remove.includes(l));
    const [row] = await opts.db.$queryRaw<{ labels: string[] }[]>`
      UPDATE "PullRequest" p SET "labels" = (
        SELECT coalesce(array_agg(x.l ORDER BY x.o), '{}') FROM (
          SELECT u.l, min(u.o) AS o FROM unnest(p."labels" || ${add}::text[]) WITH ORDINALITY AS u(l, o)
          WHERE u.l <> ALL(${[...change.remove]}::text[]) GROUP BY u.l
        ) x)
      FROM "Repository" r
      WHERE r."id" = p."repositoryId" AND r."fullName" = ${repository} AND p."number" = ${prNumber}
      RETURNING p."labels"`;
    if (!row) throw new ForgeError(`no pull request #${prNumber} in ${repository}`, "not_found");
    return { labels: row.labels };
  }

  /** The local forge has no reviewers to notify: the PR record shows a review is wanted again. */
  async function requestReview(repository: string, prNumber: number, reviewers: readonly string[]): Promise<{ detail: string }> {
    const updated = await opts.db.pullRequest.updateMany({
      where: { number: prNumber, repository: { fullName: repository } },
      data: { reviewState: "review_requested" },
    });
    if (updated.count === 0) throw new ForgeError(`no pull request #${prNumber} in ${repository}`, "not_found");
    return { detail: `review requested on #${prNumber}${reviewers.length > 0 ? ` from ${reviewers.join(", ")}` : ""}` };
  }

  return {
    kind: "local",
    setLabels,
    requestReview,
    branchHead: (repository, branch) => resolveRevision(bareRepoPath(opts.dataDir, repository), branch),
    async findWriteBack(req) {
      switch (req.kind) {
        case "push_commits":
        case "update_pr_branch": {
          const sha = await findCommit(bareRepoPath(opts.dataDir, req.target.repository), req.idempotencyKey);
          return sha ? { externalRef: sha, detail: `commit ${sha.slice(0, 12)} (found by its ${writeBackTrailer} trailer)` } : null;
        }
        case "comment":
        case "review":
        case "approve_review":
          return findNote(notesDir(opts.dataDir, req.target.repository, req.target.prNumber), req.idempotencyKey);
        case "rerun_workflow":
          return findRerun(req);
        case "open_pr":
          return findLocalOpenPr(opts, req);
        case "publish_release":
          return findLocalRelease(opts.dataDir, req);
        case "roll_back": {
          if (req.rollBack?.mode === "rerun_last_good") return findRerun(req);
          const sha = await findCommit(bareRepoPath(opts.dataDir, req.target.repository), req.idempotencyKey);
          return sha ? { externalRef: sha, detail: `revert commit ${sha.slice(0, 12)} (found by its ${writeBackTrailer} trailer)` } : null;
        }
        default:
          return null;
      }
    },
    async executeWriteBack(req) {
      switch (req.kind) {
        case "push_commits":
        case "update_pr_branch":
          return pushPatch(bareRepoPath(opts.dataDir, req.target.repository), req);
        case "comment":
          return writeNote(notesDir(opts.dataDir, req.target.repository, req.target.prNumber), req);
        case "review":
        case "approve_review": {
          // A review is a note on the PR's conversation, and the PR record's review state follows it.
          if (!req.target.prNumber) throw new ForgeError("a review needs a pull request", "forge_error");
          const pr = await opts.db.pullRequest.findFirst({ where: { number: req.target.prNumber, repository: { fullName: req.target.repository } }, select: { id: true } });
          if (!pr) throw new ForgeError(`no pull request #${req.target.prNumber} in ${req.target.repository}`, "not_found");
          const done = await writeNote(notesDir(opts.dataDir, req.target.repository, req.target.prNumber), req);
          await opts.db.pullRequest.update({ where: { id: pr.id }, data: { reviewState: reviewStateOf[reviewEventOf(req) ?? "COMMENT"] } });
          return done;
        }
        case "rerun_workflow":
          return rerun(req);
        case "open_pr":
          return openLocalPr(opts, req);
        case "publish_release":
          return publishLocalRelease(opts.dataDir, req);
        case "roll_back":
          // A revert is a commit pushed like an agent's patch; a rerun is a local CI run of the good commit.
          return req.rollBack?.mode === "rerun_last_good" ? rerun(req) : pushPatch(bareRepoPath(opts.dataDir, req.target.repository), req);
        default:
          throw new ForgeError(`the local forge cannot ${req.kind.replaceAll("_", " ")}`, "unsupported");
      }
    },
  };
}
