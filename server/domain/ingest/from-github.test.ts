import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isAppError } from "@/server/errors";
import { zCiEvent, type CiEvent } from "@/server/domain/ci-events/ci-event";
import { fromGithub } from "./from-github";

const FIXTURES = new URL("./fixtures/github/", import.meta.url);

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as Record<string, unknown>;
}

const HELLO = {
  fullName: "Codertocat/Hello-World",
  cloneUrl: "https://github.com/Codertocat/Hello-World.git",
  defaultBranch: "main",
  visibility: "public",
};
const HEAD_SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const FORK_SHA = "7638417db6d59f3c431d3e1f261cc637155684cd";

type Case = { fixture: string; event: string; expected: Record<string, unknown> };

const cases: Case[] = [
  {
    fixture: "check_run.completed.failure.json",
    event: "check_run",
    expected: {
      type: "failed_check",
      via: "check_run",
      level: "job",
      repository: HELLO,
      headSha: HEAD_SHA,
      headBranch: "changes",
      isFork: false,
      workflowName: "octocoders-linter",
      jobName: "Octocoders-linter",
      checkName: "Octocoders-linter",
      runId: "118578147",
      jobId: "128620228",
      conclusion: "failure",
      url: "https://github.com/Codertocat/Hello-World/runs/128620228",
      pullRequests: [
        { number: 2, headRef: "changes", headSha: HEAD_SHA, baseRef: "main", isFork: false, headRepoFullName: HELLO.fullName },
      ],
      actor: { login: "Codertocat", type: "user" },
    },
  },
  {
    fixture: "check_run.completed.success.json",
    event: "check_run",
    expected: { type: "ignored", reason: "conclusion success is not a failure", repositoryFullName: HELLO.fullName },
  },
  {
    fixture: "check_run.completed.github-actions.json",
    event: "check_run",
    expected: { type: "ignored", reason: expect.stringContaining("arrives as workflow_job") },
  },
  {
    fixture: "check_run.completed.fork.json",
    event: "check_run",
    expected: { type: "failed_check", isFork: true, headBranch: null, pullRequests: [], conclusion: "timed_out", headSha: FORK_SHA },
  },
  {
    fixture: "workflow_run.completed.failure.json",
    event: "workflow_run",
    expected: {
      type: "failed_check",
      via: "workflow_run",
      level: "pipeline",
      workflowName: "CI",
      jobName: null,
      runId: "30433642",
      runAttempt: 1,
      triggerEvent: "pull_request",
      isFork: false,
      headBranch: "changes",
      pullRequests: [{ number: 2, isFork: false }],
      url: "https://github.com/Codertocat/Hello-World/actions/runs/30433642",
    },
  },
  {
    fixture: "workflow_run.completed.fork.json",
    event: "workflow_run",
    expected: {
      type: "failed_check",
      isFork: true,
      headBranch: "patch-1",
      headSha: FORK_SHA,
      pullRequests: [],
      actor: { login: "new-contributor" },
    },
  },
  {
    fixture: "workflow_run.completed.action_required.json",
    event: "workflow_run",
    expected: { type: "ignored", reason: expect.stringContaining("action_required") },
  },
  {
    fixture: "workflow_job.completed.failure.json",
    event: "workflow_job",
    expected: {
      type: "failed_check",
      via: "workflow_job",
      level: "job",
      workflowName: "CI",
      jobName: "test (ubuntu-latest, 20)",
      checkName: "test (ubuntu-latest, 20)",
      step: "Run npm test",
      runId: "940463255",
      jobId: "2832853555",
      headBranch: "changes",
      isFork: null,
      runnerLabels: ["ubuntu-latest"],
      runnerName: "GitHub Actions 5",
    },
  },
  {
    fixture: "issue_comment.created.pr-command.json",
    event: "issue_comment",
    expected: {
      type: "pr_comment",
      command: "fix_failing_check",
      args: "lint",
      handle: "@agent",
      actor: { login: "octocat", association: "MEMBER", type: "user" },
      pullRequest: { number: 2, url: "https://github.com/Codertocat/Hello-World/pull/2", state: "open" },
      commentId: "492700400",
    },
  },
  {
    fixture: "issue_comment.created.first-time-contributor.json",
    event: "issue_comment",
    expected: { type: "pr_comment", command: "diagnose", actor: { association: "FIRST_TIME_CONTRIBUTOR" } },
  },
  {
    fixture: "issue_comment.created.issue.json",
    event: "issue_comment",
    expected: { type: "ignored", reason: "comment on an issue, not a pull request" },
  },
  {
    fixture: "pull_request.labeled.json",
    event: "pull_request",
    expected: {
      type: "pr_labeled",
      label: "agent:diagnose",
      actor: { login: "octocat", association: null },
      pullRequest: {
        number: 2,
        isFork: false,
        headRef: "changes",
        headSha: HEAD_SHA,
        baseRef: "main",
        labels: ["bug", "agent:diagnose"],
        author: "Codertocat",
        authorAssociation: "OWNER",
        changedFilesCount: 2,
      },
    },
  },
  {
    fixture: "pull_request.opened.fork.json",
    event: "pull_request",
    expected: {
      type: "pr_updated",
      action: "opened",
      pullRequest: {
        number: 7,
        isFork: true,
        headRepoFullName: "new-contributor/Hello-World",
        headSha: FORK_SHA,
        body: "",
        authorAssociation: "FIRST_TIME_CONTRIBUTOR",
      },
    },
  },
  {
    fixture: "pull_request.synchronize.json",
    event: "pull_request",
    expected: {
      type: "pr_updated",
      action: "synchronize",
      before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
      after: HEAD_SHA,
      pullRequest: { number: 2, isFork: false },
    },
  },
  {
    fixture: "push.tag.json",
    event: "push",
    expected: {
      type: "release",
      via: "tag_push",
      tag: "v1.2.0",
      version: "1.2.0",
      // the commit, not the annotated tag object in `after`
      commitSha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
      assets: [],
    },
  },
  {
    fixture: "push.branch.json",
    event: "push",
    // Recorded so a later workflow_job failure at this commit is known to be the repository's own.
    expected: { type: "branch_push", branch: "main", headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", before: null, forced: false },
  },
  {
    fixture: "release.published.json",
    event: "release",
    expected: {
      type: "release",
      via: "release_published",
      tag: "v1.2.0",
      version: "1.2.0",
      commitSha: null,
      targetCommitish: "main",
      assets: [
        { name: "hello-world-1.2.0.tgz", digest: expect.stringMatching(/^sha256:/), sizeBytes: 48213 },
        { name: "SHA256SUMS", contentType: "text/plain" },
      ],
    },
  },
  {
    fixture: "pull_request_review.submitted.json",
    event: "pull_request_review",
    expected: {
      type: "pr_review",
      actor: { login: "octocat", association: "MEMBER" },
      review: { state: "approved", commitSha: HEAD_SHA, body: "Looks good once the lint job is green." },
      pullRequest: { number: 2, isFork: false },
    },
  },
];

describe("fromGithub maps each documented payload", () => {
  it.each(cases)("$event $fixture", ({ fixture: name, event, expected }) => {
    const result = fromGithub(event, fixture(name));
    expect(result).toMatchObject(expected);
    // whatever comes out is a valid normalised event
    expect(zCiEvent.parse(result)).toEqual(result);
  });

  it("covers every fixture file", async () => {
    const { readdirSync } = await import("node:fs");
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".json"));
    expect(files.sort()).toEqual(cases.map((c) => c.fixture).sort());
  });
});

describe("fromGithub options and edge cases", () => {
  it("accepts GitHub Actions check runs when asked to", () => {
    const result = fromGithub("check_run", fixture("check_run.completed.github-actions.json"), {
      acceptActionsCheckRuns: true,
    });
    expect(result).toMatchObject({ type: "failed_check", jobName: "test (ubuntu-latest, 20)" });
  });

  it("uses the repository's configured bot handle", () => {
    const payload = fixture("issue_comment.created.pr-command.json");
    expect(fromGithub("issue_comment", payload, { botHandle: "@ci-bot" })).toMatchObject({
      type: "ignored",
      reason: "comment does not address @ci-bot",
    });
    const comment = payload.comment as Record<string, unknown>;
    comment.body = "@CI-Bot triage please";
    expect(fromGithub("issue_comment", payload, { botHandle: "ci-bot" })).toMatchObject({
      type: "pr_comment",
      command: "triage",
      args: "please",
      handle: "@ci-bot",
    });
  });

  it("ignores comments written by bots, so its own suggestions never loop", () => {
    const payload = fixture("issue_comment.created.pr-command.json");
    const comment = payload.comment as { user: { login: string; type: string } };
    comment.user = { ...comment.user, login: "airlock[bot]", type: "Bot" };
    expect(fromGithub("issue_comment", payload)).toMatchObject({ type: "ignored", reason: "comment by bot airlock[bot]" });
  });

  it("names unknown commands and the known ones", () => {
    const payload = fixture("issue_comment.created.pr-command.json");
    (payload.comment as Record<string, unknown>).body = "@agent deploy to prod";
    const result = fromGithub("issue_comment", payload);
    expect(result).toMatchObject({ type: "ignored" });
    expect((result as Extract<CiEvent, { type: "ignored" }>).reason).toBe(
      'unknown command "deploy to prod" for @agent; known: diagnose, fix failing check, triage, cancel',
    );
  });

  it.each([
    ["check_run", "created", 'check_run action "created": only "completed" can fail'],
    ["workflow_job", "in_progress", 'workflow_job action "in_progress": only "completed" can fail'],
    ["issue_comment", "edited", 'issue_comment action "edited": only new comments dispatch'],
    ["pull_request", "assigned", 'pull_request action "assigned" changes nothing Airlock records'],
    ["release", "created", 'release action "created": only published releases trigger'],
    ["pull_request_review", "dismissed", 'pull_request_review action "dismissed" is not stored'],
  ])("ignores %s %s without validating the rest", (event, action, reason) => {
    expect(fromGithub(event, { action, repository: { full_name: "a/b" } })).toEqual({
      type: "ignored",
      eventName: event,
      action,
      reason,
      repositoryFullName: "a/b",
    });
  });

  it("ignores unhandled events and pings", () => {
    expect(fromGithub("star", { action: "created" })).toMatchObject({ type: "ignored", reason: 'event "star" is not handled' });
    expect(fromGithub("ping", { zen: "Keep it logically awesome." })).toMatchObject({ type: "ignored" });
  });

  it("ignores deleted tags", () => {
    const payload = fixture("push.tag.json");
    payload.deleted = true;
    expect(fromGithub("push", payload)).toMatchObject({ type: "ignored", reason: "tag deleted" });
  });

  it("takes a release's commit from a full-SHA target_commitish", () => {
    const payload = fixture("release.published.json");
    (payload.release as Record<string, unknown>).target_commitish = HEAD_SHA;
    expect(fromGithub("release", payload)).toMatchObject({ commitSha: HEAD_SHA });
  });

  it("derives visibility from `private` when the payload predates `visibility`", () => {
    const payload = fixture("workflow_job.completed.failure.json");
    const repo = payload.repository as Record<string, unknown>;
    delete repo.visibility;
    repo.private = true;
    expect(fromGithub("workflow_job", payload)).toMatchObject({ repository: { visibility: "private" } });
  });

  it("treats a pull request whose head repository was deleted as a fork", () => {
    const payload = fixture("pull_request.synchronize.json");
    ((payload.pull_request as Record<string, unknown>).head as Record<string, unknown>).repo = null;
    expect(fromGithub("pull_request", payload)).toMatchObject({ pullRequest: { isFork: true, headRepoFullName: null } });
  });

  it("treats an unknown author_association as none (and so refused later)", () => {
    const payload = fixture("issue_comment.created.pr-command.json");
    (payload.comment as Record<string, unknown>).author_association = "SPONSOR";
    expect(fromGithub("issue_comment", payload)).toMatchObject({ actor: { association: null } });
  });
});

describe("fromGithub rejects malformed payloads with the field's path", () => {
  function errorOf(fn: () => unknown): { message: string; details?: Record<string, unknown> } {
    try {
      fn();
    } catch (err) {
      if (isAppError(err)) return { message: err.message, details: err.details };
      throw err;
    }
    throw new Error("expected an error");
  }

  it("reports a missing repository.full_name as Required", () => {
    const payload = fixture("workflow_run.completed.failure.json");
    delete (payload.repository as Record<string, unknown>).full_name;
    const error = errorOf(() => fromGithub("workflow_run", payload));
    expect(error.message).toBe("invalid workflow_run payload: repository.full_name: Required");
    expect(error.details).toMatchObject({ issues: [{ path: "repository.full_name", message: "Required" }] });
  });

  it("reports every bad field, with array indices", () => {
    const payload = fixture("workflow_job.completed.failure.json");
    const job = payload.workflow_job as { steps: Array<Record<string, unknown>>; head_sha?: unknown };
    delete job.head_sha;
    job.steps[2]!.number = "three";
    const error = errorOf(() => fromGithub("workflow_job", payload));
    expect(error.message).toContain("workflow_job.head_sha: Required");
    expect(error.message).toContain("workflow_job.steps.2.number: Invalid input: expected number, received string");
  });

  it("is an UNPROCESSABLE AppError", () => {
    try {
      fromGithub("check_run", { action: "completed" });
      expect.unreachable();
    } catch (err) {
      expect(isAppError(err) && err.code).toBe("UNPROCESSABLE");
      expect(isAppError(err) && err.reason).toBe("invalid_webhook_payload");
    }
  });
});
