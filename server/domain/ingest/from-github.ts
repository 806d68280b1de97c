// GitHub webhook (event name + payload) -> normalised CI event.
import type { z } from "zod";
import { AppError } from "@/server/errors";
import { isFailingConclusion, PR_UPDATE_ACTIONS, type CiEvent, type FailingConclusion } from "@/server/domain/ci-events/ci-event";
import { mapCheckRun, mapWorkflowJob, mapWorkflowRun } from "./github/map-checks";
import { mapIssueComment, mapPullRequest, mapPullRequestReview } from "./github/map-pull-requests";
import { mapPush, mapRelease } from "./github/map-releases";
import {
  zGhCheckRunCompleted,
  zGhIssueCommentCreated,
  zGhPullRequestEvent,
  zGhPullRequestReviewSubmitted,
  zGhPush,
  zGhReleasePublished,
  zGhWorkflowJobCompleted,
  zGhWorkflowRunCompleted,
} from "./github/payload-schemas";
import { DEFAULT_BOT_HANDLE, normaliseHandle } from "./pr-command";
import { formatIssues, issuesToText, requiredMessage } from "@/server/lib/zod-issues";

export type FromGithubOptions = {
  /** The repository's bot handle (Repository.botHandle); default "@agent". */
  botHandle?: string;
  /**
   * GitHub Actions reports every job twice: as a workflow_job and as a check_run from the
   * "github-actions" app. workflow_job carries the workflow name and the failed step, so by default
   * Actions' check_runs are ignored as duplicates; set this when only check_run is subscribed.
   */
  acceptActionsCheckRuns?: boolean;
};

/**
 * Map one delivery. Events and actions Airlock does not act on come back as `ignored` with a
 * reason (never an error). A handled event whose payload is malformed throws an AppError
 * UNPROCESSABLE naming each bad field, e.g. "repository.full_name: Required".
 */
export function fromGithub(eventName: string, payload: unknown, options: FromGithubOptions = {}): CiEvent {
  const peeked = peek(payload);
  const ignore = (reason: string): CiEvent => ({
    type: "ignored",
    eventName,
    action: peeked.action,
    reason,
    repositoryFullName: peeked.repositoryFullName,
  });
  const notCompleted = () => ignore(`${eventName} action "${peeked.action ?? "(none)"}": only "completed" can fail`);

  switch (eventName) {
    case "ping":
      return ignore("ping: the webhook is configured");
    case "check_run": {
      if (peeked.action !== "completed") return notCompleted();
      const p = parse(eventName, zGhCheckRunCompleted, payload);
      const slug = p.check_run.app.slug;
      if (slug === "github-actions" && !options.acceptActionsCheckRuns) {
        return ignore("check_run from GitHub Actions: the same job arrives as workflow_job, with its failed step");
      }
      return failing(p.check_run.conclusion, ignore, (c) => mapCheckRun(p, c));
    }
    case "workflow_run": {
      if (peeked.action !== "completed") return notCompleted();
      const p = parse(eventName, zGhWorkflowRunCompleted, payload);
      return failing(p.workflow_run.conclusion, ignore, (c) => mapWorkflowRun(p, c));
    }
    case "workflow_job": {
      if (peeked.action !== "completed") return notCompleted();
      const p = parse(eventName, zGhWorkflowJobCompleted, payload);
      return failing(p.workflow_job.conclusion, ignore, (c) => mapWorkflowJob(p, c));
    }
    case "issue_comment": {
      if (peeked.action !== "created") return ignore(`issue_comment action "${peeked.action}": only new comments dispatch`);
      const handle = normaliseHandle(options.botHandle ?? DEFAULT_BOT_HANDLE);
      return mapIssueComment(parse(eventName, zGhIssueCommentCreated, payload), handle, ignore);
    }
    case "pull_request": {
      const action = peeked.action ?? "";
      if (action !== "labeled" && !(PR_UPDATE_ACTIONS as readonly string[]).includes(action)) {
        return ignore(`pull_request action "${action}" changes nothing Airlock records`);
      }
      return mapPullRequest(parse(eventName, zGhPullRequestEvent, payload), ignore);
    }
    case "pull_request_review": {
      if (peeked.action !== "submitted") return ignore(`pull_request_review action "${peeked.action}" is not stored`);
      return mapPullRequestReview(parse(eventName, zGhPullRequestReviewSubmitted, payload), ignore);
    }
    case "push":
      return mapPush(parse(eventName, zGhPush, payload), ignore);
    case "release": {
      if (peeked.action !== "published") return ignore(`release action "${peeked.action}": only published releases trigger`);
      return mapRelease(parse(eventName, zGhReleasePublished, payload));
    }
    default:
      return ignore(`event "${eventName}" is not handled`);
  }
}

function failing(
  conclusion: string | null,
  ignore: (reason: string) => CiEvent,
  map: (conclusion: FailingConclusion) => CiEvent,
): CiEvent {
  if (isFailingConclusion(conclusion)) return map(conclusion);
  if (conclusion === "action_required") {
    return ignore("conclusion action_required: GitHub is waiting for a person, there is nothing to diagnose");
  }
  return ignore(`conclusion ${conclusion ?? "(none)"} is not a failure`);
}

/** Read `action` and the repository name without trusting the payload's shape. */
function peek(payload: unknown): { action: string | null; repositoryFullName: string | null } {
  const obj = isRecord(payload) ? payload : {};
  const repo = isRecord(obj.repository) ? obj.repository : {};
  return {
    action: typeof obj.action === "string" ? obj.action : null,
    repositoryFullName: typeof repo.full_name === "string" ? repo.full_name : null,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parse<S extends z.ZodType>(eventName: string, schema: S, payload: unknown): z.infer<S> {
  const result = schema.safeParse(payload, { error: requiredMessage });
  if (result.success) return result.data;
  const issues = formatIssues(result.error.issues);
  throw new AppError("UNPROCESSABLE", `invalid ${eventName} payload: ${issuesToText(issues)}`, {
    reason: "invalid_webhook_payload",
    details: { event: eventName, issues },
  });
}
