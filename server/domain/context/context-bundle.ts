// The context bundle: everything an agent run is given, as structured data (agents do not
// scrape CI pages). One field per item of the spec's "Required context bundle fields", plus the
// task and a redaction summary. Stored on AgentDispatchRun.contextBundle; its digest is
// sha256(canonicalJson(bundle)).
import { z } from "zod";
import {
  zApprovalMode,
  zAuthorAssociation,
  zCheckConclusion,
  zRepoRole,
  zRunSource,
  zTaskKind,
  zTrustTier,
  zVisibility,
  zWriteBackKind,
} from "@/server/domain/ci-events/enums";
import { zRedactionReport } from "./redaction/report";

export const CONTEXT_BUNDLE_VERSION = 1;

const nullableString = z.string().nullable();

export const zBundleTask = z.object({
  kind: zTaskKind,
  /** What the agent must hand back (e.g. "diagnosis in Markdown; optional unified diff"). */
  outputFormat: z.string(),
});

export const zBundleRepository = z.object({
  fullName: z.string().min(1),
  defaultBranch: z.string().min(1),
  cloneUrl: z.string(),
  visibility: zVisibility,
  trustTier: zTrustTier,
});

export const zBundleRef = z.object({
  /** The branch that was built (the PR head branch for pull requests). */
  branch: nullableString,
  commitSha: z.string().min(1),
  headRef: nullableString,
  headSha: nullableString,
  baseRef: nullableString,
  baseSha: nullableString,
  /** null: unknown, which policy treats as a fork (untrusted). */
  isFork: z.boolean().nullable(),
  headRepoFullName: nullableString,
  /** Release runs: the tag being released. */
  tag: nullableString,
});

export const zBundleSource = z.object({
  kind: zRunSource,
  /** How the trigger reached Airlock. */
  via: z.enum(["github_webhook", "local_ci", "ui", "api", "schedule", "agent"]),
  triggerRuleId: nullableString,
  triggerRuleName: nullableString,
  deliveryId: nullableString,
  eventName: nullableString,
  /** pr_comment: the command and its arguments ("fix_failing_check lint"). */
  command: nullableString,
  label: nullableString,
  url: nullableString,
  parentRunId: nullableString,
});

export const zBundleActor = z.object({
  login: z.string().min(1),
  kind: z.enum(["user", "bot", "team", "system"]),
  association: zAuthorAssociation.nullable(),
  airlockRole: zRepoRole.nullable(),
  permission: z.object({ allowed: z.boolean(), reason: z.string() }),
});

export const zBundleDiscussionItem = z.object({
  kind: z.enum(["comment", "review"]),
  author: z.string(),
  body: z.string(),
  url: nullableString,
  at: nullableString,
});

export const zBundlePullRequest = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string(),
  url: nullableString,
  author: z.string(),
  draft: z.boolean(),
  labels: z.array(z.string()),
  changedFiles: z.array(z.string()),
  reviewState: nullableString,
  mergeable: z.boolean().nullable(),
  discussion: z.array(zBundleDiscussionItem),
});

export const zBundlePipeline = z.object({
  workflowName: z.string(),
  runId: z.string(),
  status: z.enum(["queued", "in_progress", "completed"]),
  conclusion: zCheckConclusion.nullable(),
  checkName: z.string(),
  url: nullableString,
  event: nullableString,
});

export const zBundleJob = z.object({
  id: z.string(),
  name: z.string(),
  step: nullableString,
  exitCode: z.number().int().nullable(),
  runnerPool: nullableString,
  image: nullableString,
  durationMs: z.number().int().nonnegative().nullable(),
});

export const zBundleLog = z.object({
  name: z.string(),
  excerpt: z.string(),
  /** 1-based line numbers of the excerpt within the full log. */
  startLine: z.number().int().positive(),
  endLine: z.number().int().nonnegative(),
  focusLine: z.number().int().positive().nullable(),
  totalLines: z.number().int().nonnegative(),
  truncated: z.boolean(),
  /** What redaction removed from the full log this excerpt came from. */
  redaction: zRedactionReport,
});

export const zBundleArtifact = z.object({
  name: z.string(),
  /** Free-form type: "patch", "coverage", "junit", "image", "chart", "checksums"... */
  type: z.string(),
  url: nullableString,
  digest: nullableString,
  sizeBytes: z.number().int().nonnegative().nullable(),
  retainUntil: nullableString,
});

export const zSimilarRun = z.object({
  runId: z.string(),
  headSha: z.string(),
  signature: nullableString,
  url: nullableString,
  at: nullableString,
  outcome: nullableString,
});

export const zBundleFailure = z.object({
  signature: nullableString,
  stackTrace: nullableString,
  testNames: z.array(z.string()),
  errorLines: z.array(z.string()),
  filePaths: z.array(z.string()),
  similarRuns: z.array(zSimilarRun),
});

export const zBundleStack = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int().positive(),
  /** Digest of the stack snapshot the run uses. */
  digest: z.string(),
  model: z.object({ provider: z.string(), name: z.string() }),
  adapter: z.string(),
  toolProfile: z.string(),
  tools: z.array(z.string()),
  mcpServers: z.array(z.object({ name: z.string(), privileged: z.boolean() })),
  skills: z.array(z.string()),
  subagents: z.array(z.string()),
  approvalMode: zApprovalMode,
});

export const zBundlePolicy = z.object({
  allowedTools: z.array(z.string()),
  writeBackMode: z.enum(["read_only", "approval_required", "exceptions_allowed"]),
  approvalMode: zApprovalMode,
  writeBackExceptions: z.array(zWriteBackKind),
  botCommentsAllowed: z.boolean(),
  network: z.enum(["none", "restricted", "open"]),
  networkAllowlist: z.array(z.string()),
  secrets: z.enum(["none", "unprivileged", "granted"]),
});

export const zBundleIdentity = z.object({
  /** Null until runner-pool admission has chosen them. */
  runnerPool: nullableString,
  trustTier: zTrustTier.nullable(),
  runtimeServiceAccount: nullableString,
  runnerServiceAccount: nullableString,
  nativeRoles: z.array(z.string()),
  /** Names only: secret values never enter a bundle. */
  secretGrants: z.array(z.object({ secretName: z.string(), privileged: z.boolean() })),
  configGrants: z.array(z.object({ configMapName: z.string() })),
});

export const zContextLabel = z.object({
  name: z.string(),
  /** The prompt fragment this label contributes. */
  fragment: z.string(),
  provenance: z.object({
    source: z.enum(["stack", "repository", "trigger_rule", "user", "system"]),
    ref: nullableString,
  }),
});

/** A red check's attribution on a branch with agent activity (red-check attribution policy). */
export const zBundleAttribution = z.object({
  check: z.string(),
  attribution: z.enum(["ours", "pre_existing", "unknown"]),
  rule: nullableString,
  /** What the agent should do about it: fix ours first, report pre-existing, read the output when unknown. */
  guidance: z.string(),
  /** The observations the decision used, oldest first. */
  history: z.string(),
});

export const zContextBundle = z.object({
  version: z.literal(CONTEXT_BUNDLE_VERSION),
  task: zBundleTask,
  repository: zBundleRepository,
  ref: zBundleRef,
  source: zBundleSource,
  actor: zBundleActor,
  pullRequest: zBundlePullRequest.nullable(),
  pipeline: zBundlePipeline.nullable(),
  job: zBundleJob.nullable(),
  logs: z.array(zBundleLog),
  artifacts: z.array(zBundleArtifact),
  failure: zBundleFailure.nullable(),
  stack: zBundleStack,
  policy: zBundlePolicy,
  identity: zBundleIdentity,
  contextLabels: z.array(zContextLabel),
  /** Absent (not empty) when no red check is attributed, so older bundles keep their digests. */
  attribution: z.array(zBundleAttribution).optional(),
  /** Everything redaction removed from any string in the bundle, summed. */
  redaction: zRedactionReport,
});

export type ContextBundle = z.infer<typeof zContextBundle>;
export type BundleRepository = z.infer<typeof zBundleRepository>;
export type BundleRef = z.infer<typeof zBundleRef>;
export type BundleSource = z.infer<typeof zBundleSource>;
export type BundleActor = z.infer<typeof zBundleActor>;
export type BundlePullRequest = z.infer<typeof zBundlePullRequest>;
export type BundlePipeline = z.infer<typeof zBundlePipeline>;
export type BundleJob = z.infer<typeof zBundleJob>;
export type BundleLog = z.infer<typeof zBundleLog>;
export type BundleArtifact = z.infer<typeof zBundleArtifact>;
export type BundleFailure = z.infer<typeof zBundleFailure>;
export type SimilarRun = z.infer<typeof zSimilarRun>;
export type BundleStack = z.infer<typeof zBundleStack>;
export type BundlePolicy = z.infer<typeof zBundlePolicy>;
export type BundleIdentity = z.infer<typeof zBundleIdentity>;
export type ContextLabel = z.infer<typeof zContextLabel>;
export type BundleAttribution = z.infer<typeof zBundleAttribution>;
