// The trigger rule form's schemas: the triggers procedures validate with these and the form uses
// the same ones through zodResolver. A rule may set only the match keys its kind can carry
// (APPLICABLE_KEYS) and start only the task kinds its kind allows. Nothing here needs Node.
import { z } from "zod";
import { zId } from "@/server/lib/ids";
import { zTaskKind, zTriggerAction, zTriggerKind } from "@/server/domain/ci-events/schemas";
import { ALLOWED_TASK_KINDS, APPLICABLE_KEYS, TRIGGER_DEFAULTS, type MatchKey } from "../schemas";

export { ALLOWED_TASK_KINDS, APPLICABLE_KEYS, TRIGGER_DEFAULTS, type MatchKey } from "../schemas";

/** A match key left empty means "any": "" and null both store null. */
const zOptionalKey = z
  .string()
  .trim()
  .max(200, "At most 200 characters")
  .nullable()
  .transform((v) => (v === null || v === "" ? null : v));

/** A number field left empty (the form's NaN, "", null, or absent) is null: "not set". */
const zOptionalInt = (min: number, max: number, unit: string) =>
  z.preprocess(
    (v) => (v === "" || v === undefined || (typeof v === "number" && Number.isNaN(v)) ? null : v),
    z.int(`Whole ${unit}`).min(min, `At least ${min} ${unit}`).max(max, `At most ${max} ${unit}`).nullable(),
  ).default(null);

/** A crontab line's five fields (minute hour day month weekday); the service parses it fully. */
export const CRON_SHAPE = /^\S+(\s+\S+){4}$/;

/** What a new flaky-scan rule scans: nightly at 02:00 UTC, the last 3 days, 3 failures or more. */
export const FLAKY_SCAN_DEFAULTS = { scanSchedule: "0 2 * * *", scanWindowHours: 72, scanThreshold: 3 } as const;

/** The form field each match key lives in. */
export const MATCH_KEY_FIELDS = {
  repository: "repositoryId",
  workflow: "workflow",
  job: "job",
  step: "step",
  branch: "branchGlob",
  paths: "pathFilters",
  failureSignature: "failureSignature",
  version: "releaseVersion",
  chart: "releaseChart",
  npm: "releaseNpmPackage",
  image: "releaseImage",
  checksum: "releaseChecksum",
  releaseBranch: "releaseBranch",
} as const satisfies Record<MatchKey, string>;

/** A release key: a name or glob of up to 100 characters, no spaces; empty means any. */
const zReleaseKey = zOptionalKey.refine((v) => v === null || (v.length <= 100 && !/\s/.test(v)), "A name or glob of up to 100 characters, without spaces");

export const zTriggerRuleFields = z.object({
  name: z.string().trim().min(1, "Required").max(120, "At most 120 characters"),
  kind: zTriggerKind,
  /** "" or null: every repository (only an Airlock admin may save that). */
  repositoryId: z
    .string()
    .nullable()
    .transform((v) => (v === null || v === "" ? null : v)),
  workflow: zOptionalKey,
  job: zOptionalKey,
  step: zOptionalKey,
  branchGlob: zOptionalKey,
  pathFilters: z.array(z.string().trim().min(1, "Empty pattern").max(200, "At most 200 characters")).max(50, "At most 50 patterns"),
  failureSignature: zOptionalKey,
  /** Release rules: a glob on the version ("2.*"). */
  releaseVersion: zReleaseKey.default(null),
  /** Release rules: the Helm chart the release ships (<chart>-<version>.tgz). */
  releaseChart: zReleaseKey.default(null),
  /** Release rules: the npm package the release ships (npm pack's tarball). */
  releaseNpmPackage: zReleaseKey.default(null),
  /** Release rules: the image the release ships (<image>:<tag>; local forge only). */
  releaseImage: zReleaseKey.default(null),
  /** Release rules: the checksum file the release ships ("SHA256SUMS"). */
  releaseChecksum: zReleaseKey.default(null),
  /** Release rules: a glob on the branches the tag's commit is on. */
  releaseBranch: zReleaseKey.default(null),
  stackId: zId.min(1, "Pick a stack"),
  taskKind: zTaskKind,
  action: zTriggerAction,
  /** Fire alongside a more specific rule that matches the same failure (else the most specific wins). */
  alsoFire: z.boolean().default(false),
  /** Flaky-scan rules: a crontab line in UTC ("0 2 * * *"); empty: only "Scan now". */
  scanSchedule: z.preprocess((v) => (typeof v === "string" ? v.trim() || null : (v ?? null)), z.string().max(100, "At most 100 characters").nullable()).default(null),
  /** Flaky-scan rules: how many hours back a scan reads (at most 30 days). */
  scanWindowHours: zOptionalInt(1, 720, "hours"),
  /** Flaky-scan rules: failures of one signature that make a cluster. */
  scanThreshold: zOptionalInt(2, 1000, "failures"),
  enabled: z.boolean(),
});

type RuleFields = z.output<typeof zTriggerRuleFields>;

function checkRule(rule: RuleFields, ctx: z.RefinementCtx) {
  const applicable = APPLICABLE_KEYS[rule.kind];
  const set: Record<MatchKey, boolean> = {
    repository: rule.repositoryId !== null,
    workflow: rule.workflow !== null,
    job: rule.job !== null,
    step: rule.step !== null,
    branch: rule.branchGlob !== null,
    paths: rule.pathFilters.length > 0,
    failureSignature: rule.failureSignature !== null,
    version: rule.releaseVersion !== null,
    chart: rule.releaseChart !== null,
    npm: rule.releaseNpmPackage !== null,
    image: rule.releaseImage !== null,
    checksum: rule.releaseChecksum !== null,
    releaseBranch: rule.releaseBranch !== null,
  };
  for (const key of Object.keys(set) as MatchKey[]) {
    if (set[key] && !applicable.includes(key)) {
      ctx.addIssue({ code: "custom", path: [MATCH_KEY_FIELDS[key]], message: `${rule.kind} rules cannot match on ${key}: clear it` });
    }
  }
  if (!ALLOWED_TASK_KINDS[rule.kind].includes(rule.taskKind)) {
    ctx.addIssue({
      code: "custom",
      path: ["taskKind"],
      message: `${rule.kind} rules start ${ALLOWED_TASK_KINDS[rule.kind].join(" or ")}`,
    });
  }
  if (rule.failureSignature !== null && !/^[0-9a-f]{16}$/i.test(rule.failureSignature)) {
    ctx.addIssue({ code: "custom", path: ["failureSignature"], message: "16 hex characters: copy it from a failed job" });
  }
  rule.pathFilters.forEach((p, i) => {
    if (p === "!") ctx.addIssue({ code: "custom", path: ["pathFilters", i], message: "A negated pattern needs a path" });
  });
  if (rule.kind === "flaky_scan") {
    if (rule.scanWindowHours === null) ctx.addIssue({ code: "custom", path: ["scanWindowHours"], message: "How far back a scan reads, in hours" });
    if (rule.scanThreshold === null) ctx.addIssue({ code: "custom", path: ["scanThreshold"], message: "How many failures of one signature make a cluster" });
    if (rule.scanSchedule !== null && !CRON_SHAPE.test(rule.scanSchedule)) {
      ctx.addIssue({ code: "custom", path: ["scanSchedule"], message: "Five fields: minute hour day month weekday, e.g. 0 2 * * *" });
    }
  } else {
    for (const field of ["scanSchedule", "scanWindowHours", "scanThreshold"] as const) {
      if (rule[field] !== null) ctx.addIssue({ code: "custom", path: [field], message: "Only flaky-scan rules scan: clear it" });
    }
  }
}

export const zTriggerRuleInput = zTriggerRuleFields.superRefine(checkRule);
export type TriggerRuleFormValues = z.input<typeof zTriggerRuleInput>;
export type TriggerRuleInput = z.output<typeof zTriggerRuleInput>;

export const zUpdateTriggerRuleInput = zTriggerRuleFields
  .extend({ ruleId: zId, expectedVersion: z.int().positive() })
  .superRefine(checkRule);

export const zRuleRefInput = z.object({ ruleId: zId, expectedVersion: z.int().positive() });
export const zRuleIdInput = z.object({ ruleId: zId });

export const zDryRunInput = z.object({
  /** The rule being edited (its dedupe keys use its id); null for a new rule. */
  ruleId: zId.nullable(),
  rule: zTriggerRuleInput,
});

export function emptyTriggerRule(kind: RuleFields["kind"] = "failed_check"): TriggerRuleFormValues {
  return {
    name: "",
    kind,
    repositoryId: "",
    workflow: "",
    job: "",
    step: "",
    branchGlob: "",
    pathFilters: [],
    failureSignature: "",
    releaseVersion: "",
    releaseChart: "",
    releaseNpmPackage: "",
    releaseImage: "",
    releaseChecksum: "",
    releaseBranch: "",
    stackId: "",
    taskKind: TRIGGER_DEFAULTS[kind].taskKind,
    action: TRIGGER_DEFAULTS[kind].action,
    alsoFire: false,
    ...(kind === "flaky_scan" ? FLAKY_SCAN_DEFAULTS : { scanSchedule: "", scanWindowHours: null, scanThreshold: null }),
    enabled: true,
  };
}
