// zod schemas for the parts of GitHub webhook payloads that ingest reads. They validate before
// mapping so a malformed delivery fails with the field's path ("repository.full_name: Required")
// instead of a TypeError deep in a mapper. Only the fields we read are required; everything else
// passes through unchecked, because GitHub adds fields all the time.
//
// The checks at the bottom prove at compile time that each payload GitHub's OpenAPI description
// publishes (@octokit/openapi-webhooks-types) is assignable to our schema's type: a renamed or
// retyped field in GitHub's published shapes breaks the build here, not in production.
import type { components } from "@octokit/openapi-webhooks-types";
import { z } from "zod";

export const zGhUser = z.object({
  login: z.string().min(1),
  type: z.string(),
});
export type GhUser = z.infer<typeof zGhUser>;

export const zGhRepository = z.object({
  id: z.number(),
  full_name: z.string().min(1),
  private: z.boolean(),
  // Older payloads (and GitHub's own older examples) have no `visibility`; `private` decides then.
  visibility: z.enum(["public", "private", "internal"]).optional(),
  html_url: z.string(),
  clone_url: z.string(),
  default_branch: z.string().min(1),
});
export type GhRepository = z.infer<typeof zGhRepository>;

const zGhRepoRef = z.object({ id: z.number(), url: z.string(), name: z.string() });

/** The short pull request reference in check_run / workflow_run payloads. */
export const zGhPullRequestLink = z.object({
  url: z.string(),
  number: z.number(),
  head: z.object({ ref: z.string(), sha: z.string(), repo: zGhRepoRef }),
  base: z.object({ ref: z.string(), sha: z.string(), repo: zGhRepoRef }),
});
export type GhPullRequestLink = z.infer<typeof zGhPullRequestLink>;

export const zGhCheckRunCompleted = z.object({
  action: z.literal("completed"),
  check_run: z.object({
    id: z.number(),
    name: z.string().min(1),
    head_sha: z.string().min(1),
    html_url: z.string(),
    status: z.string(),
    conclusion: z.string().nullable(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    check_suite: z.object({
      id: z.number(),
      head_branch: z.string().nullable(),
      head_sha: z.string(),
    }),
    app: z.object({ name: z.string(), slug: z.string().optional() }),
    pull_requests: z.array(zGhPullRequestLink),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhCheckRunCompleted = z.infer<typeof zGhCheckRunCompleted>;

export const zGhWorkflowRunCompleted = z.object({
  action: z.literal("completed"),
  workflow_run: z.object({
    id: z.number(),
    name: z.string().nullable(),
    head_branch: z.string().nullable(),
    head_sha: z.string().min(1),
    event: z.string(),
    conclusion: z.string().nullable(),
    html_url: z.string(),
    run_attempt: z.number().optional(),
    run_started_at: z.string().optional(),
    updated_at: z.string(),
    pull_requests: z.array(zGhPullRequestLink),
    // null when the head repository (a fork) has been deleted.
    head_repository: z.object({ id: z.number(), full_name: z.string() }).nullable(),
    repository: z.object({ id: z.number(), full_name: z.string() }),
    triggering_actor: zGhUser.optional(),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhWorkflowRunCompleted = z.infer<typeof zGhWorkflowRunCompleted>;

export const zGhWorkflowJobCompleted = z.object({
  action: z.literal("completed"),
  workflow_job: z.object({
    id: z.number(),
    run_id: z.number(),
    run_attempt: z.number().optional(),
    name: z.string().min(1),
    head_sha: z.string().min(1),
    // Both arrived in payloads after GitHub's first published examples; absent means unknown.
    head_branch: z.string().nullable().optional(),
    workflow_name: z.string().nullable().optional(),
    html_url: z.string(),
    status: z.string(),
    conclusion: z.string().nullable(),
    started_at: z.string(),
    completed_at: z.string().nullable(),
    steps: z.array(
      z.object({ name: z.string(), status: z.string(), conclusion: z.string().nullable(), number: z.number() }),
    ),
    labels: z.array(z.string()),
    runner_name: z.string().nullable(),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhWorkflowJobCompleted = z.infer<typeof zGhWorkflowJobCompleted>;

export const zGhIssueCommentCreated = z.object({
  action: z.literal("created"),
  issue: z.object({
    number: z.number(),
    title: z.string(),
    html_url: z.string(),
    state: z.enum(["open", "closed"]),
    user: zGhUser,
    // Present only when the issue is a pull request.
    pull_request: z.object({ html_url: z.string().optional() }).optional(),
  }),
  comment: z.object({
    id: z.number(),
    body: z.string(),
    html_url: z.string(),
    user: zGhUser,
    author_association: z.string(),
    performed_via_github_app: z.object({ name: z.string() }).nullable().optional(),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhIssueCommentCreated = z.infer<typeof zGhIssueCommentCreated>;

const zGhPullRequestSide = z.object({
  ref: z.string(),
  sha: z.string(),
  // A pull request whose fork was deleted has `head.repo: null`.
  repo: z.object({ id: z.number(), full_name: z.string() }).nullable(),
});

export const zGhPullRequest = z.object({
  number: z.number(),
  html_url: z.string(),
  title: z.string(),
  body: z.string().nullable(),
  user: zGhUser,
  author_association: z.string(),
  state: z.enum(["open", "closed"]),
  draft: z.boolean().optional(),
  merged: z.boolean().nullable().optional(),
  mergeable: z.boolean().nullable().optional(),
  labels: z.array(z.object({ name: z.string() })),
  changed_files: z.number().optional(),
  head: zGhPullRequestSide,
  base: zGhPullRequestSide.extend({ repo: z.object({ id: z.number(), full_name: z.string() }) }),
});
export type GhPullRequest = z.infer<typeof zGhPullRequest>;

export const zGhPullRequestEvent = z.object({
  action: z.string(),
  number: z.number(),
  pull_request: zGhPullRequest,
  label: z.object({ name: z.string() }).optional(),
  before: z.string().optional(),
  after: z.string().optional(),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhPullRequestEvent = z.infer<typeof zGhPullRequestEvent>;

export const zGhPush = z.object({
  ref: z.string().min(1),
  before: z.string(),
  after: z.string(),
  created: z.boolean(),
  deleted: z.boolean(),
  forced: z.boolean().optional(),
  base_ref: z.string().nullable(),
  compare: z.string(),
  head_commit: z.object({ id: z.string() }).nullable(),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhPush = z.infer<typeof zGhPush>;

export const zGhReleasePublished = z.object({
  action: z.literal("published"),
  release: z.object({
    id: z.number(),
    tag_name: z.string().min(1),
    target_commitish: z.string(),
    name: z.string().nullable(),
    draft: z.boolean(),
    prerelease: z.boolean(),
    html_url: z.string(),
    assets: z.array(
      z.object({
        name: z.string(),
        content_type: z.string(),
        size: z.number(),
        browser_download_url: z.string(),
        // GitHub reports "sha256:<hex>" on assets uploaded since mid-2025.
        digest: z.string().nullable().optional(),
      }),
    ),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhReleasePublished = z.infer<typeof zGhReleasePublished>;

export const zGhPullRequestReviewSubmitted = z.object({
  action: z.literal("submitted"),
  review: z.object({
    id: z.number(),
    body: z.string().nullable(),
    commit_id: z.string(),
    state: z.string(),
    html_url: z.string(),
    submitted_at: z.string().nullable(),
    user: zGhUser,
    author_association: z.string(),
  }),
  pull_request: z.object({
    number: z.number(),
    html_url: z.string(),
    title: z.string(),
    user: zGhUser,
    head: zGhPullRequestSide,
    base: zGhPullRequestSide.extend({ repo: z.object({ id: z.number(), full_name: z.string() }) }),
  }),
  repository: zGhRepository,
  sender: zGhUser,
});
export type GhPullRequestReviewSubmitted = z.infer<typeof zGhPullRequestReviewSubmitted>;

// ---------------------------------------------------------------- compile-time conformance

// GitHub's description marks many fields optional or nullable that deliveries carry (a push's
// `sender`, a check suite's `id`); our schemas require what the mappers read and refuse a
// delivery without it, naming the field. So the shapes are compared with those markers removed:
// a field renamed, removed or given another type still fails here. `repository.visibility` is
// any string there; we accept the three values GitHub documents, so it is left out.
type Strict<T> = T extends readonly unknown[]
  ? Strict<NonNullable<T[number]>>[]
  : T extends object
    ? { [K in keyof T as [NonNullable<T[K]>] extends [never] ? never : K]-?: Strict<NonNullable<T[K]>> }
    : NonNullable<T>;
type WithoutVisibility<T> = T extends { repository: infer R } ? Omit<T, "repository"> & { repository: Omit<R, "visibility"> } : T;
type Schemas = components["schemas"];
type Covers<Name extends keyof Schemas, Ours> = [WithoutVisibility<Strict<Schemas[Name]>>] extends [WithoutVisibility<Ours>] ? true : false;
type Assert<T extends true> = T;
// Every action of the `pull_request` event (zGhPullRequestEvent parses them all before mapping);
// the review, review comment and review thread events share the prefix but are other events.
type PullRequestEventName = Exclude<
  Extract<keyof Schemas, `webhook-pull-request-${string}`>,
  `webhook-pull-request-review-${"comment" | "thread"}-${string}` | `webhook-pull-request-review-${"submitted" | "edited" | "dismissed"}`
>;

// Not exported: nothing imports it; tsc checks it.
type _PayloadSchemaConformance = [
  Assert<Covers<"webhook-check-run-completed", GhCheckRunCompleted>>,
  Assert<Covers<"webhook-workflow-run-completed", GhWorkflowRunCompleted>>,
  Assert<Covers<"webhook-workflow-job-completed", GhWorkflowJobCompleted>>,
  Assert<Covers<"webhook-issue-comment-created", GhIssueCommentCreated>>,
  Assert<Covers<PullRequestEventName, GhPullRequestEvent>>,
  Assert<Covers<"webhook-push", GhPush>>,
  Assert<Covers<"webhook-release-published", GhReleasePublished>>,
  Assert<Covers<"webhook-pull-request-review-submitted", GhPullRequestReviewSubmitted>>,
];
