// The matcher's view of a TriggerRule row, which match keys each trigger kind can use, the
// defaults a new rule of each kind gets, and a check of a rule before it is saved.
import { z } from "zod";
import { releaseKeysOf } from "./release-facts";
import { zTaskKind, zTriggerAction, zTriggerKind, type TaskKind, type TriggerAction, type TriggerKind } from "@/server/domain/ci-events/enums";

/** Shaped like the Prisma TriggerRule model, so a row can be passed as it is. */
export const zTriggerRule = z.object({
  id: z.string().min(1),
  name: z.string(),
  kind: zTriggerKind,
  /** Match keys: null (or an empty list) means "any". */
  repositoryId: z.string().nullable(),
  /** Alternative to repositoryId for rules written by hand or in tests ("owner/name"). */
  repositoryFullName: z.string().nullable().optional(),
  workflow: z.string().nullable(),
  job: z.string().nullable(),
  step: z.string().nullable(),
  branchGlob: z.string().nullable(),
  pathFilters: z.array(z.string()),
  failureSignature: z.string().nullable(),
  /** Release rules only (release-keys.ts); absent (older callers) is null. */
  releaseVersion: z.string().nullable().optional(),
  releaseChart: z.string().nullable().optional(),
  releaseNpmPackage: z.string().nullable().optional(),
  releaseImage: z.string().nullable().optional(),
  releaseChecksum: z.string().nullable().optional(),
  releaseBranch: z.string().nullable().optional(),
  stackId: z.string().min(1),
  taskKind: zTaskKind,
  action: zTriggerAction,
  /** Fire even when a more specific rule matches the same subject (precedence.ts); default false. */
  alsoFire: z.boolean().optional(),
  /** Flaky-scan rules only (flaky-scan.ts): schedule (crontab, UTC), window and threshold. */
  scanSchedule: z.string().nullable().optional(),
  scanWindowHours: z.number().int().nullable().optional(),
  scanThreshold: z.number().int().nullable().optional(),
  enabled: z.boolean(),
  version: z.number().int().positive().optional(),
});
export type TriggerRule = z.infer<typeof zTriggerRule>;

export const MATCH_KEYS = ["repository", "workflow", "job", "step", "branch", "paths", "failureSignature", "version", "chart", "npm", "image", "checksum", "releaseBranch"] as const;
export type MatchKey = (typeof MATCH_KEYS)[number];

/**
 * Which keys a rule of each kind may set. A key outside this list can never be satisfied by
 * that kind's events (a PR comment has no job), so a rule that sets one is refused on save and
 * never matches. For release rules `branch` is matched against the tag ("v2.*"); the release keys
 * (version ... releaseBranch) are release rules' own (release-keys.ts).
 */
export const APPLICABLE_KEYS: Record<TriggerKind, readonly MatchKey[]> = {
  failed_check: ["repository", "workflow", "job", "step", "branch", "paths", "failureSignature"],
  pr_comment: ["repository", "branch", "paths"],
  label: ["repository", "branch", "paths"],
  check_rerun: ["repository", "workflow", "job", "step", "branch"],
  release: ["repository", "workflow", "branch", "version", "chart", "npm", "image", "checksum", "releaseBranch"],
  flaky_scan: ["repository", "workflow", "job", "branch", "paths", "failureSignature"],
  manual: ["repository", "workflow", "job", "step", "branch", "paths", "failureSignature"],
};

/**
 * Defaults for a new rule, from the spec: a failed check suggests a diagnosis; explicit requests
 * (comment, label, manual, rerun) run; a release runs a release review; a flaky cluster runs a
 * triage. The failed-check auto-run additionally needs the repository's policy (see matcher).
 */
export const TRIGGER_DEFAULTS: Record<TriggerKind, { taskKind: TaskKind; action: TriggerAction }> = {
  failed_check: { taskKind: "diagnose", action: "suggest" },
  pr_comment: { taskKind: "diagnose", action: "auto_run" },
  label: { taskKind: "diagnose", action: "auto_run" },
  check_rerun: { taskKind: "diagnose", action: "auto_run" },
  release: { taskKind: "release_review", action: "auto_run" },
  flaky_scan: { taskKind: "triage", action: "auto_run" },
  manual: { taskKind: "diagnose", action: "auto_run" },
};

/** Task kinds a rule of each kind can start. */
export const ALLOWED_TASK_KINDS: Record<TriggerKind, readonly TaskKind[]> = {
  failed_check: ["diagnose", "repair", "triage"],
  // One per comment command: diagnose, fix failing check (repair), triage.
  pr_comment: ["diagnose", "repair", "triage"],
  label: ["diagnose", "repair", "triage"],
  check_rerun: ["diagnose", "repair"],
  release: ["release_review"],
  flaky_scan: ["triage", "repair"],
  manual: ["diagnose", "repair", "triage", "release_review"],
};

export function setKeys(rule: TriggerRule): MatchKey[] {
  const set: MatchKey[] = [];
  if (rule.repositoryId !== null || (rule.repositoryFullName ?? null) !== null) set.push("repository");
  if (rule.workflow !== null) set.push("workflow");
  if (rule.job !== null) set.push("job");
  if (rule.step !== null) set.push("step");
  if (rule.branchGlob !== null) set.push("branch");
  if (rule.pathFilters.length > 0) set.push("paths");
  if (rule.failureSignature !== null) set.push("failureSignature");
  for (const [key] of releaseKeysOf(rule)) set.push(key);
  return set;
}

/** Problems that make a rule unusable, as sentences; empty when the rule is fine. */
export function validateTriggerRule(rule: TriggerRule): string[] {
  const problems: string[] = [];
  const applicable = APPLICABLE_KEYS[rule.kind];
  for (const key of setKeys(rule)) {
    if (!applicable.includes(key)) problems.push(`${rule.kind} rules cannot match on ${key}`);
  }
  if (!ALLOWED_TASK_KINDS[rule.kind].includes(rule.taskKind)) {
    problems.push(`${rule.kind} rules start ${ALLOWED_TASK_KINDS[rule.kind].join(" or ")}, not ${rule.taskKind}`);
  }
  for (const [key, value] of [
    ["workflow", rule.workflow],
    ["job", rule.job],
    ["step", rule.step],
    ["branchGlob", rule.branchGlob],
    ["failureSignature", rule.failureSignature],
    ...releaseKeysOf(rule),
  ] as const) {
    if (value !== null && value.trim() === "") problems.push(`${key} is empty: use null for "any"`);
  }
  if (rule.pathFilters.some((p) => p.trim() === "" || p.trim() === "!")) problems.push("pathFilters has an empty pattern");
  return problems;
}
