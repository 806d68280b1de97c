// The Prisma enums CI events, rules and forms use, as zod schemas and ordered lists, read from
// Prisma's generated enums (server/db/generated/enums: plain objects, safe in the browser), so a
// value added to schema.prisma reaches every list and check without a copy to keep in step.
import { z } from "zod";
import {
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

/** The enum's values in schema order (the order forms list them in). */
const valuesOf = <T extends string>(e: Record<string, T>): readonly T[] => Object.values(e);

export const TASK_KINDS = valuesOf(TaskKind);
export const TRIGGER_KINDS = valuesOf(TriggerKind);
export const WRITE_BACK_KINDS = valuesOf(WriteBackKind);

export const zTaskKind = z.enum(TaskKind);
export const zTriggerKind = z.enum(TriggerKind);
export const zRunSource = z.enum(RunSource);
export const zTriggerAction = z.enum(TriggerAction);
export const zVisibility = z.enum(Visibility);
export const zTrustTier = z.enum(TrustTier);
export const zRepoRole = z.enum(RepoRole);
export const zApprovalMode = z.enum(ApprovalMode);
export const zWriteBackKind = z.enum(WriteBackKind);
export const zCheckConclusion = z.enum(CheckConclusion);

export type { ApprovalMode, CheckConclusion, RepoRole, RunSource, TaskKind, TriggerAction, TriggerKind, TrustTier, Visibility, WriteBackKind };

/**
 * GitHub's `author_association` values (webhooks-types' AuthorAssociation); not a Prisma enum.
 * FIRST_TIMER and FIRST_TIME_CONTRIBUTOR both occur in real payloads.
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
