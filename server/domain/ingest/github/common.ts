// Mapping helpers shared by the GitHub event mappers.
import type { ForgeActor, PullRequestRef, PullRequestSnapshot, RepositoryRef } from "@/server/domain/ci-events/ci-event";
import { AUTHOR_ASSOCIATIONS, type AuthorAssociation } from "@/server/domain/ci-events/enums";
import type { GhPullRequest, GhPullRequestLink, GhRepository, GhUser } from "./payload-schemas";

export function repositoryRef(repo: GhRepository): RepositoryRef {
  return {
    fullName: repo.full_name,
    cloneUrl: repo.clone_url,
    htmlUrl: repo.html_url,
    defaultBranch: repo.default_branch,
    visibility: repo.visibility ?? (repo.private ? "private" : "public"),
  };
}

/** Unknown association strings (GitHub adds values now and then) become null: unknown, refused. */
export function toAssociation(value: string | null | undefined): AuthorAssociation | null {
  return (AUTHOR_ASSOCIATIONS as readonly string[]).includes(value ?? "") ? (value as AuthorAssociation) : null;
}

export function actorFromUser(user: GhUser, association: string | null = null): ForgeActor {
  return {
    login: user.login,
    type: user.type === "Bot" ? "bot" : user.type === "Organization" ? "organization" : "user",
    association: toAssociation(association),
    airlockRole: null,
  };
}

export function isBotUser(user: GhUser): boolean {
  return user.type === "Bot" || user.login.endsWith("[bot]");
}

/** check_run / workflow_run links carry repo ids only: a fork is a different head repo id. */
export function pullRequestRefFromLink(link: GhPullRequestLink, repo: GhRepository): PullRequestRef {
  return {
    number: link.number,
    url: `${repo.html_url}/pull/${link.number}`,
    headRef: link.head.ref,
    headSha: link.head.sha,
    headRepoFullName: link.head.repo.id === repo.id ? repo.full_name : null,
    baseRef: link.base.ref,
    baseSha: link.base.sha,
    isFork: link.head.repo.id !== link.base.repo.id,
  };
}

/**
 * A pull request is from a fork when its head repository differs from its base repository. A
 * deleted head repository (`head.repo: null`) can only have been a fork: a branch of the base
 * repository cannot outlive it.
 */
export function pullRequestSnapshot(pr: GhPullRequest): PullRequestSnapshot {
  const headRepo = pr.head.repo;
  return {
    number: pr.number,
    url: pr.html_url,
    headRef: pr.head.ref,
    headSha: pr.head.sha,
    headRepoFullName: headRepo?.full_name ?? null,
    baseRef: pr.base.ref,
    baseSha: pr.base.sha,
    isFork: headRepo === null ? true : headRepo.id !== pr.base.repo.id,
    title: pr.title,
    body: pr.body ?? "",
    author: pr.user.login,
    authorAssociation: toAssociation(pr.author_association),
    state: pr.state,
    draft: pr.draft ?? false,
    merged: pr.merged ?? false,
    mergeable: pr.mergeable ?? null,
    labels: pr.labels.map((l) => l.name),
    changedFilesCount: pr.changed_files ?? null,
  };
}
