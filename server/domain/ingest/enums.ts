// Runtime copies of the Prisma enums this area needs. The generated client is imported as types
// only (it is produced by `prisma generate` and git-ignored); the `satisfies` + equality checks
// below fail to compile the moment schema.prisma and these lists drift apart.
import { z } from "zod";
import type {
  ApprovalMode,
  CheckConclusion,
  RepoRole,
  RunSource,
  TaskKind,
  TriggerAction,
  TriggerKind,
  TrustTier,
  Visibility,
  WriteBackKind,
} from "@/server/db/generated/enums";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function exhaustive<T>() {
  return <const L extends readonly T[]>(list: L & (Same<L[number], T> extends true ? unknown : never)) => list;
}

export const TASK_KINDS = exhaustive<TaskKind>()(["diagnose", "repair", "triage", "release_review"]);
export const TRIGGER_KINDS = exhaustive<TriggerKind>()([
  "failed_check",
  "pr_comment",
  "label",
  "check_rerun",
  "release",
  "flaky_scan",
  "manual",
]);
export const RUN_SOURCES = exhaustive<RunSource>()([
  "failed_check",
  "check_rerun",
  "pr_comment",
  "label",
  "release",
  "flaky_scan",
  "manual",
  "review",
  "fork",
  "resume",
]);
export const TRIGGER_ACTIONS = exhaustive<TriggerAction>()(["suggest", "auto_run"]);
export const VISIBILITIES = exhaustive<Visibility>()(["public", "private", "internal"]);
export const TRUST_TIERS = exhaustive<TrustTier>()(["trusted", "untrusted"]);
export const REPO_ROLES = exhaustive<RepoRole>()(["viewer", "maintainer", "admin"]);
export const APPROVAL_MODES = exhaustive<ApprovalMode>()(["always", "exceptions_allowed"]);
export const WRITE_BACK_KINDS = exhaustive<WriteBackKind>()([
  "push_commits",
  "update_pr_branch",
  "open_pr",
  "comment",
  "review",
  "approve_review",
  "rerun_workflow",
  "publish_release",
  "privileged_capability",
  "set_labels",
]);
export const CHECK_CONCLUSIONS = exhaustive<CheckConclusion>()([
  "success",
  "failure",
  "cancelled",
  "timed_out",
  "skipped",
  "neutral",
  "action_required",
  "startup_failure",
  "stale",
]);

export const zTaskKind = z.enum(TASK_KINDS);
export const zTriggerKind = z.enum(TRIGGER_KINDS);
export const zRunSource = z.enum(RUN_SOURCES);
export const zTriggerAction = z.enum(TRIGGER_ACTIONS);
export const zVisibility = z.enum(VISIBILITIES);
export const zTrustTier = z.enum(TRUST_TIERS);
export const zRepoRole = z.enum(REPO_ROLES);
export const zApprovalMode = z.enum(APPROVAL_MODES);
export const zWriteBackKind = z.enum(WRITE_BACK_KINDS);
export const zCheckConclusion = z.enum(CHECK_CONCLUSIONS);

export type { ApprovalMode, CheckConclusion, RepoRole, RunSource, TaskKind, TriggerAction, TriggerKind, TrustTier, Visibility, WriteBackKind };

/**
 * GitHub's `author_association` values (webhooks-types' AuthorAssociation). FIRST_TIMER and
 * FIRST_TIME_CONTRIBUTOR both occur in real payloads.
 */
export const AUTHOR_ASSOCIATIONS = [
  "OWNER",
  "MEMBER",
  "COLLABORATOR",
  "CONTRIBUTOR",
  "FIRST_TIMER",
  "FIRST_TIME_CONTRIBUTOR",
  "MANNEQUIN",
  "NONE",
] as const;
export const zAuthorAssociation = z.enum(AUTHOR_ASSOCIATIONS);
export type AuthorAssociation = z.infer<typeof zAuthorAssociation>;
