import { z } from "zod";
import { RepoRole, TaskKind, TriggerAction, TriggerKind } from "@/server/db/generated/enums";
import { zRepositoryRef } from "./repositories";
import { zRight } from "./shared";
import { zStackOption } from "./stacks";

// What the trigger rule pages read (server/domain/triggers/rules-presenter.ts).

export const zTriggerFormOptions = z.object({
  repositories: z.array(z.object({ id: z.string(), fullName: z.string(), autoRunOnFailedCheck: z.boolean(), role: z.enum(RepoRole).nullable(), canManage: z.boolean() })),
  stacks: z.array(zStackOption),
  canManageGlobal: z.boolean(),
});

/** A trigger rule's row, as saved and as the pages show it (one shape for create, update, list and byId). */
export const zTriggerRuleRow = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(TriggerKind),
  action: z.enum(TriggerAction),
  taskKind: z.enum(TaskKind),
  repositoryId: z.string().nullable(),
  stackId: z.string(),
  version: z.number().int(),
  enabled: z.boolean(),
  workflow: z.string().nullable(),
  job: z.string().nullable(),
  step: z.string().nullable(),
  branchGlob: z.string().nullable(),
  pathFilters: z.array(z.string()),
  failureSignature: z.string().nullable(),
  releaseVersion: z.string().nullable(),
  releaseChart: z.string().nullable(),
  releaseNpmPackage: z.string().nullable(),
  releaseImage: z.string().nullable(),
  releaseChecksum: z.string().nullable(),
  releaseBranch: z.string().nullable(),
  alsoFire: z.boolean(),
  scanSchedule: z.string().nullable(),
  scanWindowHours: z.number().int().nullable(),
  scanThreshold: z.number().int().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});

const zRuleLinks = {
  repository: zRepositoryRef.nullable(),
  stack: z.object({ id: z.string(), name: z.string(), archivedAt: z.date().nullable() }),
  _count: z.object({ runs: z.number().int() }),
};

export const zTriggerRuleList = z.object({ rules: z.array(zTriggerRuleRow.extend({ ...zRuleLinks, canEdit: z.boolean() })), canCreate: z.boolean() });
export const zTriggerRuleDetail = z.object({ rule: zTriggerRuleRow.extend(zRuleLinks), canEdit: zRight });

const zScanGroup = z.object({
  repository: z.string(),
  signature: z.string(),
  jobName: z.string(),
  workflowName: z.string(),
  branch: z.string().nullable(),
  occurrences: z.number().int(),
  pipelines: z.number().int(),
  passes: z.number().int(),
  testNames: z.array(z.string()),
  cluster: z.boolean(),
  why: z.string(),
  deliveryId: z.string().nullable(),
  resultSetDigest: z.string(),
});
export const zFlakyScans = z.array(z.object({ id: z.string(), at: z.date(), windowFrom: z.date(), requestedBy: z.string(), groups: z.array(zScanGroup) }));
