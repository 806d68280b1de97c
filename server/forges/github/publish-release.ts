import { createHash } from "node:crypto";
import type { GithubClient } from "./client";
import { forgeErrorOf, split } from "./patch-commit";
import { ForgeError, type ForgeWriteBackRequest, type ForgeWriteBackResult, writeBackMarker } from "../types";

// publish_release on GitHub: POST /repos/{o}/{r}/releases (tag_name at the approved commit, the
// notes the approver saw plus the hidden write-back marker), then the approved artifact uploaded
// as the release's asset, byte for byte. Reconciliation: GET /releases/tags/{tag}; a release of
// that tag carrying the marker is this write-back's (its asset is uploaded if a crash came between
// the two calls); one without the marker is someone else's and is refused, never edited.

type Octokit = GithubClient;
type GithubRelease = { id: number; html_url: string; body?: string | null; upload_url: string; assets: { name: string }[] };

const assetName = (name: string) => name.replace(/[^A-Za-z0-9._+-]/g, "_").replace(/^\.+/, "_").slice(0, 200) || "artifact";

async function releaseOfTag(octokit: Octokit, req: ForgeWriteBackRequest, tag: string): Promise<GithubRelease | null> {
  try {
    const { data } = await octokit.rest.repos.getReleaseByTag({ ...split(req.target.repository), tag });
    if (!data.body?.includes(writeBackMarker(req.idempotencyKey))) throw new ForgeError(`a release ${tag} already exists on GitHub, not published by this write-back`, "head_moved");
    return data;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return null;
    throw err;
  }
}

async function ensureAsset(octokit: Octokit, req: ForgeWriteBackRequest, release: GithubRelease): Promise<ForgeWriteBackResult> {
  const rel = req.release as NonNullable<ForgeWriteBackRequest["release"]>;
  const name = assetName(rel.artifact.name);
  if (!release.assets.some((a) => a.name === name)) {
    await octokit.rest.repos.uploadReleaseAsset({
      ...split(req.target.repository),
      release_id: release.id,
      name,
      // Octokit sends a string body as is; the bytes are the approved artifact's.
      data: rel.artifact.content,
      url: release.upload_url,
      headers: { "content-type": "application/octet-stream" },
    });
  }
  return { externalRef: `release ${rel.tag}`, detail: release.html_url };
}

export async function findGithubRelease(octokit: Octokit, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null> {
  if (!req.release) return null;
  const release = await releaseOfTag(octokit, req, req.release.tag);
  // Found without its asset: not done yet, the execution uploads it.
  if (!release || !release.assets.some((a) => a.name === assetName(req.release?.artifact.name ?? ""))) return null;
  return { externalRef: `release ${req.release.tag}`, detail: release.html_url };
}

export async function publishGithubRelease(octokit: Octokit, req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult> {
  const rel = req.release;
  if (!rel) throw new ForgeError("publishing a release needs its tag, notes and artifact", "forge_error");
  const digest = `sha256:${createHash("sha256").update(Buffer.from(rel.artifact.content, "utf8")).digest("hex")}`;
  if (digest !== rel.artifact.digest) throw new ForgeError(`the artifact's bytes (${digest}) are not the approved ones (${rel.artifact.digest}); nothing is published`, "forge_error");
  try {
    let release = await releaseOfTag(octokit, req, rel.tag);
    if (!release) {
      try {
        ({ data: release } = await octokit.rest.repos.createRelease({
          ...split(req.target.repository),
          tag_name: rel.tag,
          target_commitish: rel.commitSha,
          name: rel.name,
          body: `${rel.notes.trim()}\n\n${writeBackMarker(req.idempotencyKey)}`,
        }));
      } catch (err) {
        // 422 already_exists: a racing execution of this write-back created it first.
        release = (err as { status?: number }).status === 422 ? await releaseOfTag(octokit, req, rel.tag) : null;
        if (!release) throw err;
      }
    }
    return await ensureAsset(octokit, req, release);
  } catch (err) {
    throw forgeErrorOf(err, `publish the release ${rel.tag}`);
  }
}
