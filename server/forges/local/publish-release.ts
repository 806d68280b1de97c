import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { type ForgeWriteBackRequest, type ForgeWriteBackResult, ForgeError, writeBackMarker, writeBackTrailer } from "../types";
import { assertRevision, git, GitError } from "./git";
import { bareRepoPath } from "./repositories";
import { writeAtomically } from "@/server/lib/write-atomically";

// publish_release on the local forge: a real annotated tag in the bare repository (its message
// carries the write-back trailer), then a release record beside the repository
// (`<name>.releases/<tag>.json`) with the published artifact's bytes next to it
// (`<name>.releases/<tag>/<artifact name>`) and their digest. Each step looks first for what a
// crashed execution did: a tag carrying this write-back's trailer is reused, a record carrying its
// marker is the result. A tag pushed before at the approved commit is the release's tag; a record
// of someone else's, or a tag at another commit, is refused, never overwritten.

export type LocalRelease = {
  tag: string;
  name: string;
  notes: string;
  commitSha: string;
  tagObject: string;
  artifact: { name: string; digest: string; sizeBytes: number; path: string };
  key: string;
  publishedAt: string;
};

const releasesDir = (dataDir: string, repository: string) => `${bareRepoPath(dataDir, repository).replace(/\.git$/, "")}.releases`;

/** A tag name git accepts and the file system cannot be walked out of. */
export const releaseTagPattern = /^(?!-)(?!.*\.\.)[A-Za-z0-9._+-][A-Za-z0-9._+/-]{0,99}(?<![./])$/;
const assetName = (name: string) => name.replace(/[^A-Za-z0-9._+-]/g, "_").replace(/^\.+/, "_").slice(0, 200) || "artifact";

function assertTag(tag: string) {
  if (!releaseTagPattern.test(tag)) throw new ForgeError(`"${tag.slice(0, 100)}" is not a tag name Airlock publishes`, "forge_error");
  assertRevision(tag);
}

const recordFile = (dataDir: string, repository: string, tag: string) => join(releasesDir(dataDir, repository), `${tag.replaceAll("/", "__")}.json`);

/** Releases published on a local repository, newest first. */
export async function listLocalReleases(dataDir: string, repository: string): Promise<LocalRelease[]> {
  const dir = releasesDir(dataDir, repository);
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json"));
  const all = await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), "utf8")) as LocalRelease));
  return all.sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
}

async function readRecord(dataDir: string, req: ForgeWriteBackRequest, tag: string): Promise<LocalRelease | null> {
  const file = recordFile(dataDir, req.target.repository, tag);
  if (!existsSync(file)) return null;
  const rec = JSON.parse(await readFile(file, "utf8")) as LocalRelease;
  if (rec.key !== req.idempotencyKey || !rec.notes.includes(writeBackMarker(req.idempotencyKey))) throw new ForgeError(`a release ${tag} was already published on ${req.target.repository}, not by this write-back`, "head_moved");
  return rec;
}

const resultOf = (rec: LocalRelease): ForgeWriteBackResult => ({ externalRef: `release ${rec.tag}`, detail: `release ${rec.tag} at ${rec.commitSha.slice(0, 12)} with ${rec.artifact.name} ${rec.artifact.digest}` });

export async function findLocalRelease(dataDir: string, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null> {
  if (!req.release) return null;
  assertTag(req.release.tag);
  const rec = await readRecord(dataDir, req, req.release.tag);
  return rec ? resultOf(rec) : null;
}

/**
 * The release's tag (null: no tag yet): this write-back's annotated tag, or a tag pushed before
 * the release at exactly the approved commit (a release workflow runs on a pushed tag, and GitHub
 * makes a release for an existing tag the same way; it is used as is, never moved). A tag of that
 * name at another commit is refused.
 */
async function ourTag(repoPath: string, tag: string, key: string, commitSha: string): Promise<string | null> {
  let type: string;
  try {
    type = (await git(["--git-dir", repoPath, "cat-file", "-t", `refs/tags/${tag}`])).trim();
  } catch (err) {
    if (err instanceof GitError) return null;
    throw err;
  }
  const message = type === "tag" ? await git(["--git-dir", repoPath, "cat-file", "tag", `refs/tags/${tag}`]) : "";
  if (!message.includes(`${writeBackTrailer}: ${key}`)) {
    const at = (await git(["--git-dir", repoPath, "rev-parse", `refs/tags/${tag}^{commit}`])).trim();
    if (at !== commitSha) throw new ForgeError(`tag ${tag} already exists at ${at.slice(0, 12)}, not at the approved commit ${commitSha.slice(0, 12)}`, "head_moved");
  }
  return (await git(["--git-dir", repoPath, "rev-parse", `refs/tags/${tag}`])).trim();
}

export async function publishLocalRelease(dataDir: string, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const rel = req.release;
  if (!rel) throw new ForgeError("publishing a release needs its tag, notes and artifact", "forge_error");
  assertTag(rel.tag);
  assertRevision(rel.commitSha);
  const bytes = Buffer.from(rel.artifact.content, "utf8");
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  if (digest !== rel.artifact.digest) throw new ForgeError(`the artifact's bytes (${digest}) are not the approved ones (${rel.artifact.digest}); nothing is published`, "forge_error");
  const existing = await readRecord(dataDir, req, rel.tag);
  if (existing) return resultOf(existing);
  const repoPath = bareRepoPath(dataDir, req.target.repository);
  let tagObject = await ourTag(repoPath, rel.tag, req.idempotencyKey, rel.commitSha);
  if (!tagObject) {
    const message = `${rel.name.trim()}\n\n${rel.notes.trim()}\n\nAirlock-Run: ${req.runId}\n${req.approvalId ? `Airlock-Approval: ${req.approvalId}\n` : ""}${writeBackTrailer}: ${req.idempotencyKey}\n`;
    try {
      await git(["--git-dir", repoPath, "tag", "--annotate", "--file=-", "--", rel.tag, rel.commitSha], { input: message });
    } catch (err) {
      // A racing execution of this write-back tagged first: its tag is as good as ours. It may
      // still hold the ref's lock ("cannot lock ref"), so look for it a few times.
      for (let i = 0; i < 20 && !tagObject; i++) {
        tagObject = await ourTag(repoPath, rel.tag, req.idempotencyKey, rel.commitSha);
        if (!tagObject) await new Promise((r) => setTimeout(r, 50));
      }
      if (!tagObject) throw new ForgeError(`git refused the tag ${rel.tag}: ${err instanceof GitError ? err.stderr.trim().slice(0, 500) : String(err)}`, "forge_error");
    }
    tagObject ??= (await git(["--git-dir", repoPath, "rev-parse", `refs/tags/${rel.tag}`])).trim();
  }
  const dir = releasesDir(dataDir, req.target.repository);
  const assetDir = join(dir, rel.tag.replaceAll("/", "__"));
  await mkdir(assetDir, { recursive: true });
  const assetPath = join(assetDir, assetName(rel.artifact.name));
  await writeAtomically(assetPath, bytes);
  const rec: LocalRelease = {
    tag: rel.tag,
    name: rel.name,
    notes: `${rel.notes.trim()}\n\n${writeBackMarker(req.idempotencyKey)}`,
    commitSha: rel.commitSha,
    tagObject,
    artifact: { name: rel.artifact.name, digest, sizeBytes: bytes.length, path: assetPath },
    key: req.idempotencyKey,
    publishedAt: new Date().toISOString(),
  };
  await writeAtomically(recordFile(dataDir, req.target.repository, rel.tag), JSON.stringify(rec, null, 2));
  return resultOf(rec);
}
