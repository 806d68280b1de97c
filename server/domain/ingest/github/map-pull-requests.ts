// issue_comment (on pull requests), pull_request and pull_request_review -> normalised events.
import { PR_UPDATE_ACTIONS, type CiEvent, type PrReviewEvent } from "@/server/domain/ci-events/ci-event";
import { KNOWN_COMMAND_PHRASES, parseBotCommand } from "../pr-command";
import { actorFromUser, isBotUser, pullRequestSnapshot, repositoryRef } from "./common";
import type { GhIssueCommentCreated, GhPullRequestEvent, GhPullRequestReviewSubmitted } from "./payload-schemas";

type Ignore = (reason: string) => CiEvent;

export function mapIssueComment(p: GhIssueCommentCreated, handle: string, ignore: Ignore): CiEvent {
  if (!p.issue.pull_request) return ignore("comment on an issue, not a pull request");
  // Bots (including Airlock's own diagnosis comments, which suggest commands) never dispatch.
  if (isBotUser(p.comment.user) || p.comment.performed_via_github_app) {
    return ignore(`comment by bot ${p.comment.user.login}`);
  }
  const parsed = parseBotCommand(p.comment.body, handle);
  if (parsed.kind === "none") return ignore(`comment does not address ${handle}`);
  if (parsed.kind === "unknown") {
    return ignore(
      `unknown command "${parsed.text.slice(0, 80)}" for ${handle}; known: ${KNOWN_COMMAND_PHRASES.join(", ")}`,
    );
  }
  return {
    type: "pr_comment",
    origin: "github",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.comment.user, p.comment.author_association),
    pullRequest: {
      number: p.issue.number,
      url: p.issue.pull_request.html_url ?? p.issue.html_url,
      title: p.issue.title,
      state: p.issue.state,
      author: p.issue.user.login,
    },
    command: parsed.command,
    args: parsed.args,
    handle,
    commentId: String(p.comment.id),
    commentUrl: p.comment.html_url,
    body: p.comment.body,
  };
}

export function mapPullRequest(p: GhPullRequestEvent, ignore: Ignore): CiEvent {
  const repository = repositoryRef(p.repository);
  // The labeler's association is not in the payload; GitHub itself restricts who may label.
  const actor = actorFromUser(p.sender);
  const pullRequest = pullRequestSnapshot(p.pull_request);
  if (p.action === "labeled") {
    if (!p.label) return ignore("labeled event without a label");
    return { type: "pr_labeled", origin: "github", repository, actor, pullRequest, label: p.label.name };
  }
  const action = PR_UPDATE_ACTIONS.find((a) => a === p.action);
  if (!action) return ignore(`pull_request action "${p.action}" changes nothing Airlock records`);
  return {
    type: "pr_updated",
    origin: "github",
    action,
    repository,
    actor,
    pullRequest,
    before: p.before ?? null,
    after: p.after ?? null,
  };
}

const REVIEW_STATES = ["approved", "changes_requested", "commented", "dismissed"] as const;

export function mapPullRequestReview(p: GhPullRequestReviewSubmitted, ignore: Ignore): CiEvent {
  const state = REVIEW_STATES.find((s) => s === p.review.state.toLowerCase());
  if (!state) return ignore(`review state "${p.review.state}" is not known`);
  const pr = p.pull_request;
  const headRepo = pr.head.repo;
  const event: PrReviewEvent = {
    type: "pr_review",
    origin: "github",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.review.user, p.review.author_association),
    pullRequest: {
      number: pr.number,
      url: pr.html_url,
      title: pr.title,
      author: pr.user.login,
      headRef: pr.head.ref,
      headSha: pr.head.sha,
      headRepoFullName: headRepo?.full_name ?? null,
      baseRef: pr.base.ref,
      baseSha: pr.base.sha,
      isFork: headRepo === null ? true : headRepo.id !== pr.base.repo.id,
    },
    review: {
      id: String(p.review.id),
      state,
      body: p.review.body ?? "",
      commitSha: p.review.commit_id,
      url: p.review.html_url,
      submittedAt: p.review.submitted_at,
    },
  };
  return event;
}
