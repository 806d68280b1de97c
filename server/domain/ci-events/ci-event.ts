// The normalised CI event: what ingest hands to trigger evaluation and persistence, whatever the
// forge. GitHub webhooks map here through `fromGithub`; the local forge and Airlock itself
// (scheduler, UI, approved agent output) emit these shapes directly.
import { z } from "zod";
import { zAuthorAssociation, zRepoRole, zTaskKind, zVisibility } from "./enums";

/**
 * Conclusions that count as a failed check.
 * - `failure`, `timed_out`: the code or its tests failed or hung: an agent can diagnose that.
 * - `startup_failure`: the workflow could not start (bad YAML, missing reusable workflow); also
 *   a defect in the repository an agent can diagnose.
 * Not failures: `action_required` (GitHub waits for a person, e.g. to approve a first-time
 * contributor's workflow: nothing to diagnose, and dispatching would sidestep that approval),
 * `cancelled`, `skipped`, `neutral`, `stale`, `success`.
 */
export const FAILING_CONCLUSIONS = ["failure", "timed_out", "startup_failure"] as const;
export const zFailingConclusion = z.enum(FAILING_CONCLUSIONS);
export type FailingConclusion = z.infer<typeof zFailingConclusion>;

export function isFailingConclusion(conclusion: string | null | undefined): conclusion is FailingConclusion {
  return (FAILING_CONCLUSIONS as readonly string[]).includes(conclusion ?? "");
}

export const zRepositoryRef = z.object({
  /** owner/name as the forge spells it. */
  fullName: z.string().min(1),
  cloneUrl: z.string(),
  htmlUrl: z.string().nullable(),
  defaultBranch: z.string().min(1),
  visibility: zVisibility,
});
export type RepositoryRef = z.infer<typeof zRepositoryRef>;

export const zForgeActor = z.object({
  login: z.string().min(1),
  type: z.enum(["user", "bot", "organization"]),
  /** GitHub's author_association where the payload carries one (comments, reviews). */
  association: zAuthorAssociation.nullable(),
  /** The actor's Airlock role on the repository, when Airlock itself knows it (UI, API). */
  airlockRole: zRepoRole.nullable().default(null),
});
export type ForgeActor = z.infer<typeof zForgeActor>;

/**
 * A pull request as CI events reference it. `isFork` is true when the head repository differs
 * from the base repository, and null when the payload cannot tell (callers must then treat the
 * ref as untrusted until the pull request record says otherwise).
 */
export const zPullRequestRef = z.object({
  number: z.number().int().positive(),
  url: z.string().nullable(),
  headRef: z.string(),
  headSha: z.string(),
  headRepoFullName: z.string().nullable(),
  baseRef: z.string(),
  baseSha: z.string().nullable(),
  isFork: z.boolean().nullable(),
});
export type PullRequestRef = z.infer<typeof zPullRequestRef>;

/** Everything needed to create or update the PullRequest record. */
export const zPullRequestSnapshot = zPullRequestRef.extend({
  title: z.string(),
  body: z.string(),
  author: z.string(),
  authorAssociation: zAuthorAssociation.nullable(),
  state: z.enum(["open", "closed"]),
  draft: z.boolean(),
  merged: z.boolean(),
  mergeable: z.boolean().nullable(),
  labels: z.array(z.string()),
  /** GitHub's count of changed files; the list itself needs an API call. */
  changedFilesCount: z.number().int().nonnegative().nullable(),
});
export type PullRequestSnapshot = z.infer<typeof zPullRequestSnapshot>;

const zOrigin = z.enum(["github", "local", "airlock"]);

export const zFailedCheckEvent = z.object({
  type: z.literal("failed_check"),
  origin: zOrigin,
  /** The forge object that reported it. */
  via: z.enum(["check_run", "workflow_run", "workflow_job", "local_ci"]),
  /** `pipeline`: a whole workflow run failed; `job`: one job (or external check run) failed. */
  level: z.enum(["pipeline", "job"]),
  repository: zRepositoryRef,
  actor: zForgeActor,
  headSha: z.string().min(1),
  headBranch: z.string().nullable(),
  /** The event that started the pipeline (pull_request, push, schedule...), when known. */
  triggerEvent: z.string().nullable(),
  /** Pull requests the payload links (GitHub leaves this empty for fork heads). */
  pullRequests: z.array(zPullRequestRef),
  isFork: z.boolean().nullable(),
  workflowName: z.string().nullable(),
  jobName: z.string().nullable(),
  checkName: z.string().nullable(),
  /** The first failed step, when the forge reports steps. */
  step: z.string().nullable(),
  /** External id of the pipeline (workflow run id, check suite id). */
  runId: z.string().min(1),
  /** External id of the job (workflow job id, check run id); null for pipeline-level failures. */
  jobId: z.string().nullable(),
  runAttempt: z.number().int().positive().nullable(),
  url: z.string().nullable(),
  conclusion: zFailingConclusion,
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  runnerLabels: z.array(z.string()),
  runnerName: z.string().nullable(),
});
export type FailedCheckEvent = z.infer<typeof zFailedCheckEvent>;

export const BOT_COMMANDS = ["diagnose", "fix_failing_check", "triage", "cancel"] as const;
export const zBotCommand = z.enum(BOT_COMMANDS);
export type BotCommand = z.infer<typeof zBotCommand>;

export const zPrCommentEvent = z.object({
  type: z.literal("pr_comment"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  /** issue_comment payloads carry no head/base refs: resolve them from the PullRequest record. */
  pullRequest: z.object({
    number: z.number().int().positive(),
    url: z.string().nullable(),
    title: z.string(),
    state: z.enum(["open", "closed"]),
    author: z.string(),
  }),
  command: zBotCommand,
  /** Whatever followed the command on its line, trimmed. */
  args: z.string(),
  handle: z.string(),
  commentId: z.string(),
  commentUrl: z.string().nullable(),
  body: z.string(),
});
export type PrCommentEvent = z.infer<typeof zPrCommentEvent>;

export const zPrLabeledEvent = z.object({
  type: z.literal("pr_labeled"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  pullRequest: zPullRequestSnapshot,
  label: z.string(),
});

export const PR_UPDATE_ACTIONS = [
  "opened",
  "reopened",
  "synchronize",
  "edited",
  "closed",
  "unlabeled",
  "ready_for_review",
  "converted_to_draft",
] as const;

/** A pull request changed: update the PullRequest record; never dispatches by itself. */
export const zPrUpdatedEvent = z.object({
  type: z.literal("pr_updated"),
  origin: zOrigin,
  action: z.enum(PR_UPDATE_ACTIONS),
  repository: zRepositoryRef,
  actor: zForgeActor,
  pullRequest: zPullRequestSnapshot,
  /** synchronize only: the head before and after the push. */
  before: z.string().nullable(),
  after: z.string().nullable(),
});

/**
 * A push to a branch of the repository itself (not a tag): recorded so a later failed check at
 * that commit is known to come from the repository (workflow_job payloads name no head
 * repository). Dispatches nothing by itself.
 */
export const zBranchPushEvent = z.object({
  type: z.literal("branch_push"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  branch: z.string().min(1),
  /** The branch's new head. */
  headSha: z.string().min(1),
  before: z.string().nullable(),
  forced: z.boolean(),
});

export const zReleaseAsset = z.object({
  name: z.string(),
  contentType: z.string().nullable(),
  sizeBytes: z.number().int().nonnegative().nullable(),
  url: z.string().nullable(),
  /** "sha256:<hex>" where the forge reports one. */
  digest: z.string().nullable(),
});

export const zReleaseEvent = z.object({
  type: z.literal("release"),
  origin: zOrigin,
  via: z.enum(["tag_push", "release_published", "publish_workflow", "schedule"]),
  repository: zRepositoryRef,
  actor: zForgeActor,
  tag: z.string().min(1),
  /** The tag without a leading "v" when the rest looks like a version ("v1.2.3" -> "1.2.3"). */
  version: z.string().min(1),
  /** The commit the tag points at; null when only a branch name is known (resolve the tag). */
  commitSha: z.string().nullable(),
  /** release events: the branch or SHA the release was cut from. */
  targetCommitish: z.string().nullable(),
  name: z.string().nullable(),
  prerelease: z.boolean(),
  url: z.string().nullable(),
  workflowName: z.string().nullable(),
  assets: z.array(zReleaseAsset),
});

/** A submitted review: stored as PR discussion and review state; dispatches nothing. */
export const zPrReviewEvent = z.object({
  type: z.literal("pr_review"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  pullRequest: zPullRequestRef.extend({ title: z.string(), author: z.string() }),
  review: z.object({
    id: z.string(),
    state: z.enum(["approved", "changes_requested", "commented", "dismissed"]),
    body: z.string(),
    commitSha: z.string(),
    url: z.string().nullable(),
    submittedAt: z.string().nullable(),
  }),
});
export type PrReviewEvent = z.infer<typeof zPrReviewEvent>;

/** Rerun of a check, requested by a person, a rule, or an approved agent output. */
export const zCheckRerunEvent = z.object({
  type: z.literal("check_rerun"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  originalRunId: z.string().min(1),
  approvalId: z.string().nullable(),
  approvedArtifactDigest: z.string().nullable(),
  target: z.object({
    workflowName: z.string().nullable(),
    jobName: z.string().nullable(),
    step: z.string().nullable(),
    checkName: z.string().min(1),
  }),
  headSha: z.string().min(1),
  headBranch: z.string().nullable(),
  pullRequestNumber: z.number().int().positive().nullable(),
});
export type CheckRerunEvent = z.infer<typeof zCheckRerunEvent>;

/** A flaky-test cluster found by a scheduled scan or a repeated-signature threshold. */
export const zFlakyScanEvent = z.object({
  type: z.literal("flaky_scan"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  signature: z.string().min(1),
  workflowName: z.string().nullable(),
  jobName: z.string().nullable(),
  testNames: z.array(z.string()),
  branch: z.string().nullable(),
  paths: z.array(z.string()),
  /** sha256 of the scan query (filters + time window), so reruns of one query share a key. */
  queryDigest: z.string().min(1),
  /** sha256 of the set of failures found, so a changed result set is a new triage. */
  resultSetDigest: z.string().min(1),
  window: z.object({ from: z.string(), to: z.string() }),
  occurrences: z.number().int().nonnegative(),
});
export type FlakyScanEvent = z.infer<typeof zFlakyScanEvent>;

/** "Diagnose with agent" and friends, from the UI or API. */
export const zManualEvent = z.object({
  type: z.literal("manual"),
  origin: zOrigin,
  repository: zRepositoryRef,
  actor: zForgeActor,
  taskKind: zTaskKind,
  /** Restrict matching to this rule (the button the person pressed). */
  ruleId: z.string().nullable(),
  pullRequestNumber: z.number().int().positive().nullable(),
  headSha: z.string().min(1),
  headBranch: z.string().nullable(),
  workflowName: z.string().nullable(),
  jobName: z.string().nullable(),
  step: z.string().nullable(),
  // The manual dispatch dialog's fields (use-cases/dispatch-manual.ts); optional, so events recorded
  // before they existed still parse. requestId: the person's submission, so two submissions are
  // two runs and a repeat of one is none; stackId: another stack than the rule's; instructions:
  // the person's text, given to the agent as written.
  requestId: z.string().min(1).max(100).optional(),
  /** The Airlock user who asked: evaluation reads their role again rather than trust this event. */
  userId: z.string().min(1).max(100).optional(),
  stackId: z.string().min(1).max(100).optional(),
  instructions: z.string().max(10_000).optional(),
});
export type ManualEvent = z.infer<typeof zManualEvent>;

export const zIgnoredEvent = z.object({
  type: z.literal("ignored"),
  eventName: z.string(),
  action: z.string().nullable(),
  reason: z.string().min(1),
  repositoryFullName: z.string().nullable(),
});

export const zCiEvent = z.discriminatedUnion("type", [
  zFailedCheckEvent,
  zPrCommentEvent,
  zPrLabeledEvent,
  zPrUpdatedEvent,
  zBranchPushEvent,
  zReleaseEvent,
  zPrReviewEvent,
  zCheckRerunEvent,
  zFlakyScanEvent,
  zManualEvent,
  zIgnoredEvent,
]);
export type CiEvent = z.infer<typeof zCiEvent>;
/** An event evaluation acts on (records, rules): anything but `ignored`. */
export type DispatchableEvent = Exclude<CiEvent, { type: "ignored" }>;

/** Strip a leading "v" from tags that look like versions: "v1.2.3" -> "1.2.3", "nightly" stays. */
export function versionFromTag(tag: string): string {
  return /^v\d/.test(tag) ? tag.slice(1) : tag;
}
