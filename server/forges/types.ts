import type { WriteBackKind } from "@/server/db/generated/enums";

// One interface for every write-back a forge executes (push a commit, update a PR branch,
// comment, review, rerun a workflow). Each write-back carries an idempotency key that the forge
// writes INTO the object it creates (a commit trailer, a comment marker), so a crash between the
// forge call and Airlock's record is reconciled by looking the object up: nothing is done twice.

export type WriteBackTarget = {
  /** owner/name */
  repository: string;
  branch?: string;
  prNumber?: number;
  check?: string;
  /** The head the approver saw: a commit is refused when the branch moved from it. */
  headSha?: string;
};

export type ForgeWriteBackRequest = {
  kind: WriteBackKind;
  idempotencyKey: string;
  runId: string;
  approvalId: string | null;
  target: WriteBackTarget;
  /** A unified diff (push_commits / update_pr_branch). */
  patch?: string;
  /** Commit message, comment or review body. */
  message: string;
  /** review / approve_review: the review's event (approve_review is always APPROVE). */
  reviewEvent?: "COMMENT" | "REQUEST_CHANGES" | "APPROVE";
  /** rerun_workflow on GitHub: rerun only this failed job (its id), else every failed job of the workflow run in `target.check`. */
  rerunJobId?: string;
  /** rerun_workflow on GitHub: the workflow run's attempt before the rerun (a later attempt is the rerun done), pinned before the call. */
  rerunAttemptBefore?: number;
  /** open_pr: the pull request opened from the new branch (target.branch) onto `base`. */
  openPr?: OpenPrRequest;
  /** publish_release: the tag, release notes and the approved artifact, byte for byte. */
  release?: ReleaseRequest;
  /** roll_back: a revert commit (the patch, on target.branch at target.headSha) or a rerun of the last good deploy. */
  rollBack?: RollBackRequest;
};

export type RollBackRequest =
  | { mode: "revert"; failingSha: string }
  /** The good deploy: its commit, and on GitHub its workflow run id (target.check). */
  | { mode: "rerun_last_good"; failingSha: string; goodSha: string; goodPipelineId: string };

export type OpenPrRequest = { base: string; title: string; body: string };

export type ReleaseRequest = { tag: string; name: string; notes: string; commitSha: string; artifact: { name: string; digest: string; content: string } };

export type ForgeWriteBackResult = {
  /** Commit SHA, comment id, review id, workflow run id. */
  externalRef: string;
  /** A URL or a sentence a person can follow. */
  detail?: string;
};

/** A refusal or failure by the forge; `message` is the forge's own error, shown to the maintainer. */
export class ForgeError extends Error {
  constructor(
    message: string,
    readonly reason: "head_moved" | "patch_does_not_apply" | "not_found" | "unsupported" | "forge_error",
  ) {
    super(message);
    this.name = "ForgeError";
  }
}

export interface Forge {
  readonly kind: "local" | "github";
  /** The object an earlier call created for this key, or null: the crash reconciliation. */
  findWriteBack(req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult | null>;
  /** Executes the write-back; throws ForgeError when the forge refuses. */
  executeWriteBack(req: ForgeWriteBackRequest): Promise<ForgeWriteBackResult>;
  /** The commit a branch points at now (null: no such branch). */
  branchHead(repository: string, branch: string): Promise<string | null>;
  /**
   * Adds and removes labels on a pull request (the fix-forward loop's ready-for-agent /
   * ready-for-human flip). Idempotent: adding a label it has and removing one it lacks are done,
   * so a retried call changes nothing twice. Returns the PR's labels afterwards.
   */
  setLabels(repository: string, prNumber: number, change: LabelChange): Promise<{ labels: string[] }>;
  /**
   * Asks for review of a pull request again (a fix run pushed its patch): on GitHub a review
   * request to these reviewers, on the local forge the PR record's review state. Idempotent.
   */
  requestReview(repository: string, prNumber: number, reviewers: readonly string[]): Promise<{ detail: string }>;
  /**
   * GitHub: a workflow run's state, its current attempt or the one asked for (null: no such run
   * or attempt). Absent on forges without workflow runs.
   */
  workflowRun?(repository: string, runId: string, attempt?: number): Promise<WorkflowRunState | null>;
}

export type WorkflowRunState = { attempt: number; status: string; conclusion: string | null; url: string | null };

export type LabelChange = { add: readonly string[]; remove: readonly string[] };

export const writeBackTrailer = "Airlock-Write-Back";
/** The marker hidden in comments and reviews. */
export const writeBackMarker = (key: string) => `<!-- airlock-write-back: ${key} -->`;

export function commitMessage(req: ForgeWriteBackRequest): string {
  const trailers = [`Airlock-Run: ${req.runId}`, ...(req.approvalId ? [`Airlock-Approval: ${req.approvalId}`] : []), `${writeBackTrailer}: ${req.idempotencyKey}`];
  return `${req.message.trim()}\n\n${trailers.join("\n")}\n`;
}
