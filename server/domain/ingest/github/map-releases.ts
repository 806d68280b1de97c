// push of a tag and release published -> release; push of a branch -> branch_push.
import { versionFromTag, type CiEvent } from "@/server/domain/ci-events/ci-event";
import { actorFromUser, repositoryRef } from "./common";
import type { GhPush, GhReleasePublished } from "./payload-schemas";

type Ignore = (reason: string) => CiEvent;

const FULL_SHA = /^[0-9a-f]{40}$/;

export function mapPush(p: GhPush, ignore: Ignore): CiEvent {
  if (p.ref.startsWith("refs/heads/")) {
    if (p.deleted) return ignore("branch deleted");
    // Failures arrive as check events; the push itself tells where their commits come from.
    return {
      type: "branch_push",
      origin: "github",
      repository: repositoryRef(p.repository),
      actor: actorFromUser(p.sender),
      branch: p.ref.slice("refs/heads/".length),
      headSha: p.after,
      // A new branch's "before" is forty zeros.
      before: FULL_SHA.test(p.before) && !/^0+$/.test(p.before) ? p.before : null,
      forced: p.forced ?? false,
    };
  }
  if (!p.ref.startsWith("refs/tags/")) return ignore(`push to ${p.ref}: neither a branch nor a tag`);
  if (p.deleted) return ignore("tag deleted");
  const tag = p.ref.slice("refs/tags/".length);
  return {
    type: "release",
    origin: "github",
    via: "tag_push",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.sender),
    tag,
    version: versionFromTag(tag),
    // For an annotated tag `after` is the tag object, not a commit; head_commit is the commit.
    commitSha: p.head_commit?.id ?? p.after,
    // GitHub names the branch whose tip the tagged commit is (null when it is no branch's tip).
    targetCommitish: p.base_ref,
    name: null,
    prerelease: false,
    url: `${p.repository.html_url}/releases/tag/${encodeURIComponent(tag)}`,
    workflowName: null,
    assets: [],
  };
}

export function mapRelease(p: GhReleasePublished): CiEvent {
  const r = p.release;
  return {
    type: "release",
    origin: "github",
    via: "release_published",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.sender),
    tag: r.tag_name,
    version: versionFromTag(r.tag_name),
    // target_commitish is usually a branch name; only a full SHA identifies the commit.
    commitSha: FULL_SHA.test(r.target_commitish) ? r.target_commitish : null,
    targetCommitish: r.target_commitish,
    name: r.name,
    prerelease: r.prerelease,
    url: r.html_url,
    workflowName: null,
    assets: r.assets.map((a) => ({
      name: a.name,
      contentType: a.content_type,
      sizeBytes: a.size,
      url: a.browser_download_url,
      digest: a.digest ?? null,
    })),
  };
}
