// Shapes a write-back request carries beyond its target, shared by the gate, the executor and the
// approval screen (components may import `**/schemas`). Nothing here needs Node.
import { z } from "zod";
import { RELEASE_GAP_KINDS } from "@/server/domain/triggers/release-facts";
import { zRedactionEntry } from "../context/redaction/report";
import { zRanWith } from "../runs/schemas";

/** The labels a `set_labels` write-back adds to and removes from one pull request. */
export const zLabelChange = z
  .object({
    add: z.array(z.string().trim().min(1).max(50)).max(10),
    remove: z.array(z.string().trim().min(1).max(50)).max(10),
  })
  .refine((c) => c.add.length + c.remove.length > 0, "A label change adds or removes at least one label")
  .refine((c) => !c.add.some((l) => c.remove.includes(l)), "A label cannot be added and removed at once");
export type LabelChange = z.infer<typeof zLabelChange>;

/**
 * What a set_labels request shows its approver: the PR and the labels added and removed, read
 * from the frozen `presented` JSON. Null when the request carries no valid label change (never
 * a guess: the screen then says so instead of showing something it cannot vouch for).
 */
export function presentedLabelChange(presented: unknown): { prNumber: number | null; add: string[]; remove: string[] } | null {
  const p = presented && typeof presented === "object" ? (presented as { labels?: unknown; target?: { prNumber?: unknown } }) : null;
  const parsed = zLabelChange.safeParse(p?.labels);
  if (!parsed.success) return null;
  const pr = p?.target?.prNumber;
  return { prNumber: typeof pr === "number" && Number.isInteger(pr) ? pr : null, add: parsed.data.add, remove: parsed.data.remove };
}

/** A review's event on the forge: a comment, a request for changes, or an approval (approve_review only). */
export const zReviewEvent = z.enum(["COMMENT", "REQUEST_CHANGES", "APPROVE"]);
export type ReviewEvent = z.infer<typeof zReviewEvent>;

/**
 * What a rerun_workflow write-back reruns (writebacks/rerun.ts): the check the run was about
 * (its Pipeline), how much of it (GitHub: every failed job of the workflow run, or the one failed
 * job; local: the whole check, which is all the local CI can do), the workflow run's attempt the
 * approver saw (a later attempt on GitHub is the rerun already done), and the approved fix whose
 * digest keys the check_rerun it emits.
 */
export const zRerunPlan = z.object({
  pipelineId: z.string().max(100),
  checkName: z.string().max(300),
  workflowName: z.string().max(300).nullable(),
  /** GitHub: the workflow run id; local: the local CI run's id. */
  externalRunId: z.string().max(100),
  scope: z.enum(["failed_jobs", "failed_job", "whole_check"]),
  /** failed_job: the GitHub job id and its name. */
  jobExternalId: z.string().max(100).nullable(),
  jobName: z.string().max(300).nullable(),
  step: z.string().max(500).nullable(),
  /** The workflow run attempt the approver saw (GitHub; null when unknown). */
  runAttempt: z.number().int().min(1).nullable(),
  /** The approved fix (push_commits) this rerun follows, or null. */
  approvedArtifactDigest: z.string().max(200).nullable(),
  headSha: z.string().max(100),
  headBranch: z.string().max(300).nullable(),
  /** Who asked for it (their email): the check_rerun's actor when no approver stands between. */
  requestedBy: z.string().max(320),
  /** What the approver is told, in words (e.g. "the local CI reruns the whole check"). */
  summary: z.string().max(1000),
});
export type RerunPlan = z.infer<typeof zRerunPlan>;

const zDenied = z.object({ name: z.string(), reason: z.string() });

const zAccount = z.object({ name: z.string().max(200), namespace: z.string().max(200), privileged: z.boolean() });

/** One privileged capability an attempt would launch with, and why it counts as privileged. */
export const zPrivilegedCapability = z.object({
  kind: z.enum(["secret", "mcp_server", "network"]),
  name: z.string().max(500),
  why: z.string().max(500),
});
export type PrivilegedCapability = z.infer<typeof zPrivilegedCapability>;

/**
 * Exactly what an attempt launches with, as admission resolved it (approvals/privileged-launch.ts
 * `launchRecord`): the prompt, context labels, the stack's tools, MCP servers, skills and
 * subagents, the pool, both service accounts, the secrets and config maps (names only, never a
 * value) and the network. A `privileged_capability` approval is bound to its digest.
 */
export const zLaunchRecord = z.object({
  prompt: z.string().max(200_000),
  promptHash: z.string().max(200),
  contextDigest: z.string().max(200),
  contextLabels: z.array(z.string().max(200)).max(200),
  stack: z.object({
    name: z.string().max(200).nullable(),
    version: z.number().int().nullable(),
    digest: z.string().max(200),
    model: z.string().max(300),
    adapter: z.string().max(50),
    tools: z.array(z.string().max(200)).max(100),
    mcpServers: z
      // `required`: absent on records made before MCP health checks (every server was then used as is).
      .array(z.object({ name: z.string().max(80), transport: z.string().max(10), target: z.string().max(500), secrets: z.array(z.string().max(80)).max(32), configMaps: z.array(z.string().max(80)).max(32), privileged: z.boolean(), required: z.boolean().optional() }))
      .max(32),
    skills: z.array(z.string().max(80)).max(100),
    subagents: z.array(z.object({ name: z.string().max(80), role: z.string().max(500), tools: z.array(z.string().max(200)).max(100) })).max(32),
  }),
  pool: z.object({ name: z.string().max(200), trustTier: z.string().max(20), kind: z.string().max(20) }),
  runtimeServiceAccount: zAccount,
  runnerServiceAccount: zAccount,
  secrets: z.array(z.object({ name: z.string().max(200), privileged: z.boolean() })).max(200),
  configMaps: z.array(z.string().max(200)).max(200),
  network: z.object({ mode: z.enum(["none", "restricted", "open"]), hosts: z.array(z.string().max(300)).max(500) }),
  privileged: z.array(zPrivilegedCapability).max(300),
});
export type LaunchRecord = z.infer<typeof zLaunchRecord>;

/** What a privileged_capability approval binds: the attempt, the record and its digest. */
export const zPresentedLaunch = z.object({
  attemptId: z.string().max(100),
  attemptNumber: z.number().int(),
  digest: z.string().max(200),
  record: zLaunchRecord,
});
export type PresentedLaunch = z.infer<typeof zPresentedLaunch>;

/** open_pr: the new branch, where it starts, the PR's base, and its title and body as they will be sent. */
export const zPresentedOpenPr = z.object({
  branch: z.string().min(1).max(200),
  fromSha: z.string().max(64),
  base: z.string().min(1).max(200),
  title: z.string().min(1).max(256),
  body: z.string().max(20_000),
});
export type PresentedOpenPr = z.infer<typeof zPresentedOpenPr>;

/** The most of a readiness report the approval screen freezes (the whole report stays an artifact of the run). */
export const maxFrozenReportChars = 64_000;

/**
 * publish_release: the tag, the commit it points at, the release's name and notes, the readiness
 * report the approver reads, and the artifact published (by digest: a changed one is stale).
 */
export const zPresentedRelease = z.object({
  tag: z.string().min(1).max(100),
  commitSha: z.string().max(64),
  name: z.string().min(1).max(200),
  notes: z.string().max(20_000),
  artifact: z.object({ id: z.string().max(100), name: z.string().max(300), digest: z.string().max(200), sizeBytes: z.number().int() }),
  report: z.object({ id: z.string().max(100), name: z.string().max(300), digest: z.string().max(200), content: z.string().max(maxFrozenReportChars).nullish(), cut: z.boolean().optional() }),
});
export type PresentedRelease = z.infer<typeof zPresentedRelease>;

/**
 * roll_back: what triage decided to undo and how (the repository's roll-back mode): a revert of
 * the failing deploy's commit on its branch (the revert diff is the request's patch artifact),
 * or a rerun of the last good deploy.
 */
export const zPresentedRollBack = z.object({
  mode: z.enum(["revert", "rerun_last_good"]),
  triageId: z.string().max(100),
  failingSha: z.string().max(64),
  failingPipelineId: z.string().max(100),
  failingCheck: z.string().max(300),
  branch: z.string().max(300),
  good: z.object({ pipelineId: z.string().max(100), sha: z.string().max(64), branch: z.string().max(300).nullable(), externalId: z.string().max(100), url: z.string().max(2000).nullable() }).nullable(),
});
export type PresentedRollBack = z.infer<typeof zPresentedRollBack>;

/**
 * What an approver is shown, frozen when the request is made (`ApprovalRequest.presented`, built
 * by approvals/presented.ts `presentedOf`). The approval screen parses the stored JSON with it,
 * so a record of another shape is reported rather than rendered as "[object Object]".
 */
/** release_gap: one readiness gap of a release review, what the approver accepts (or not) before it is published. */
export const zPresentedReleaseGap = z.object({
  id: z.string().max(300),
  kind: z.enum(RELEASE_GAP_KINDS),
  subject: z.string().max(255),
  detail: z.string().max(1000),
  tag: z.string().max(255),
  version: z.string().max(100),
  commitSha: z.string().max(64),
  ruleName: z.string().max(300),
});
export type PresentedReleaseGap = z.infer<typeof zPresentedReleaseGap>;

export const zPresented = z.object({
  prompt: z.string(),
  promptHash: z.string(),
  contextDigest: z.string(),
  contextLabels: z.array(z.string()),
  stack: z.object({
    name: z.string().nullable(),
    version: z.number().int().nullable(),
    digest: z.string(),
    model: z.string().nullable(),
    adapter: z.string().nullable(),
    tools: z.array(z.string()),
    mcpServers: z.array(
      z.object({ name: z.string(), transport: z.string(), target: z.string(), secrets: z.array(z.string()), configMaps: z.array(z.string()), privileged: z.boolean() }),
    ),
    skills: z.array(z.string()),
    subagents: z.array(z.object({ name: z.string(), role: z.string() })),
    approvalMode: z.string(),
  }),
  runnerPool: z.object({ name: z.string(), trustTier: z.string(), kind: z.string() }).nullable(),
  runtimeServiceAccount: z.string().nullable(),
  runnerServiceAccount: z.string().nullable(),
  secrets: z.object({ granted: z.array(z.string()), denied: z.array(zDenied) }),
  configMaps: z.object({ granted: z.array(z.string()), denied: z.array(zDenied) }),
  action: z.string(),
  target: z.object({
    repository: z.string(),
    branch: z.string().nullish(),
    prNumber: z.number().int().nullish(),
    check: z.string().nullish(),
    headSha: z.string().nullish(),
  }),
  artifact: z.object({ id: z.string(), kind: z.string(), name: z.string(), digest: z.string(), sizeBytes: z.number().int() }).nullable(),
  message: z.string().nullable(),
  labels: z.object({ add: z.array(z.string()), remove: z.array(z.string()) }).nullable(),
  reason: z.string(),
  exception: z.string().nullable(),
  pushProtection: z.object({ findings: z.array(zRedactionEntry), note: z.string() }).nullable(),
  /** privileged_capability: exactly what the attempt launches with once approved (absent on other kinds). */
  launch: zPresentedLaunch.nullish(),
  /** A write-back: what the attempt whose work it is ran with (absent on older requests and where none was stored). */
  ranWith: zRanWith.nullish(),
  /** review / approve_review: the review's event as the forge receives it (absent on other kinds). */
  review: z.object({ event: zReviewEvent }).nullish(),
  /** rerun_workflow: what is rerun (absent on other kinds). */
  rerun: zRerunPlan.nullish(),
  /** open_pr: the pull request that will be opened (absent on other kinds). */
  openPr: zPresentedOpenPr.nullish(),
  /** publish_release: the release that will be published and its readiness report (absent on other kinds). */
  release: zPresentedRelease.nullish(),
  /** roll_back: the failed deploy and how it is rolled back (absent on other kinds). */
  rollBack: zPresentedRollBack.nullish(),
  /** release_gap: the readiness gap accepted by approving (absent on other kinds). */
  releaseGap: zPresentedReleaseGap.nullish(),
});
export type Presented = z.infer<typeof zPresented>;
