import { z } from "zod";
import { RepoRole } from "@/server/db/generated/enums";
import { zTriggerRule } from "@/server/domain/triggers/trigger-rule";
import { zRepositoryRef } from "./repositories";
import { zRight } from "./shared";
import { zStackOption } from "./stacks";

// What the trigger rule pages read (server/domain/triggers/rules-presenter.ts).

export const zTriggerFormOptions = z.object({
  repositories: z.array(z.object({ id: z.string(), fullName: z.string(), autoRunOnFailedCheck: z.boolean(), role: z.enum(RepoRole).nullable(), canManage: z.boolean() })),
  stacks: z.array(zStackOption),
  canManageGlobal: z.boolean(),
});

/**
 * A trigger rule's row, as saved and as the pages show it (one shape for create, update, list and
 * byId): the matcher's fields as the domain declares them (server/domain/triggers/trigger-rule.ts),
 * the ones a hand-written rule may leave out being always set on a row.
 */
const { shape: rule } = zTriggerRule;
export const zTriggerRuleRow = zTriggerRule
  .pick({ id: true, name: true, kind: true, action: true, taskKind: true, repositoryId: true, stackId: true, enabled: true, workflow: true, job: true, step: true, branchGlob: true, pathFilters: true, failureSignature: true })
  .extend({
    version: rule.version.unwrap(),
    alsoFire: rule.alsoFire.unwrap(),
    scanSchedule: rule.scanSchedule.unwrap(),
    scanWindowHours: rule.scanWindowHours.unwrap(),
    scanThreshold: rule.scanThreshold.unwrap(),
    releaseVersion: rule.releaseVersion.unwrap(),
    releaseChart: rule.releaseChart.unwrap(),
    releaseNpmPackage: rule.releaseNpmPackage.unwrap(),
    releaseImage: rule.releaseImage.unwrap(),
    releaseChecksum: rule.releaseChecksum.unwrap(),
    releaseBranch: rule.releaseBranch.unwrap(),
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
