// push of a tag and release published -> release.
import { versionFromTag, type CiEvent } from "@/server/domain/ci-events/ci-event";
import { actorFromUser, repositoryRef } from "./common";
import type { GhPush, GhReleasePublished } from "./payload-schemas";

type Ignore = (reason: string) => CiEvent;

const FULL_SHA = /^[0-9a-f]{40}$/;

export function mapPush(p: GhPush, ignore: Ignore): CiEvent {
  if (!p.ref.startsWith("refs/tags/")) {
    return ignore("branch push: failures arrive as check events, pull request updates as pull_request");
  }
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
    targetCommitish: null,
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
