import { z } from "zod";
import {
  ArtifactKind,
  AttemptStatus,
  CheckConclusion,
  CodeOrigin,
  ForgeKind,
  PipelineStatus,
  PoolKind,
  RepoRole,
  RunSource,
  RunStatus,
  TaskKind,
  TriageActionKind,
  TriageActionStatus,
  TriageDisposition,
  TriggerAction,
  TriggerKind,
  TrustTier,
} from "@/server/db/generated/enums";
import { zPresented } from "@/server/domain/approvals/schemas";
import { zRedactionEntry } from "@/server/domain/context/redaction/report";
import { zAdmissionPayload, zRunEventInput } from "@/server/domain/events/catalogue";
import { zScalar } from "@/server/domain/policy/model";
import { runControlNames, type RunControlName } from "@/server/domain/runs/controls";
import { zStackSpec } from "@/server/domain/stacks/spec-schema";
import { zSandboxBlocked, zSandboxEnded, zSandboxMetered, zSandboxStarted } from "@/server/execution/sandbox/events";
import { zApprovalRow, zPerson } from "./approvals";
import { zRepositoryRef } from "./repositories";
import { zPage, zRunRef } from "./shared";
import { zStackOption } from "./stacks";
import { storedEnum, storedJson } from "./stored-json";
import { zRunWriteBack } from "./write-backs";

// What the runs list and the run page read (server/domain/runs/).

export const zRunCounts = z.object(Object.fromEntries(Object.values(RunStatus).map((s) => [s, z.number().int()])) as Record<RunStatus, z.ZodNumber>);

export const zRunFilterOptions = z.object({ stacks: z.array(z.object({ id: z.string(), name: z.string() })), actors: z.array(z.string()) });

export const zEventSearch = z.object({ seqs: z.array(z.number().int()), truncated: z.boolean() });

export const zCancelled = z.object({ runId: z.string(), from: z.enum(RunStatus), attemptsCancelled: z.number().int(), approvalsWithdrawn: z.number().int() });

/** A task kind's stack when a person asks for one (server/domain/triggers/task-stacks.ts), or why there is none. */
const zTaskStack = z.union([
  z.object({ taskKind: z.enum(TaskKind), stack: zStackOption, rule: z.object({ id: z.string(), name: z.string(), scope: z.enum(["repository", "global"]) }), reason: z.null() }),
  z.object({ taskKind: z.enum(TaskKind), stack: z.null(), rule: z.null(), reason: z.string() }),
]);

export const zDispatchOptions = z.object({
  repository: z.object({ id: z.string(), fullName: z.string(), defaultBranch: z.string() }),
  role: z.enum(RepoRole),
  refusal: z.string().nullable(),
  stacks: z.array(zStackOption),
  taskStacks: z.array(zTaskStack),
  /** The heading the prompt puts above a manual dispatch's instructions, shown in the dialog as the agent gets it. */
  instructionsHeading: z.string(),
});

/** The triage decision behind a run (server/domain/triage/presenter.ts), or null when none was made. */
export const zRunTriage = z
  .object({
    id: z.string(),
    disposition: storedEnum(TriageDisposition),
    action: storedEnum(TriageActionKind),
    actionStatus: storedEnum(TriageActionStatus),
    actionDetail: z.string(),
    refusal: z.string().nullable(),
    policyDecisionId: z.string().nullable(),
    headSha: z.string(),
    checkName: z.string(),
    createdAt: z.date(),
  })
  .nullable();

/** One page of the runs list (server/domain/runs/list.ts). */
/** A run's own columns that the list and the run page both show (cost as a number of dollars). */
const zRunColumns = {
  id: z.string(),
  number: z.number().int(),
  title: z.string(),
  source: z.enum(RunSource),
  taskKind: z.enum(TaskKind),
  actor: z.string(),
  status: z.enum(RunStatus),
  headSha: z.string(),
  headBranch: z.string().nullable(),
  isFork: z.boolean(),
  origin: z.enum(CodeOrigin).nullable(),
  costUsd: z.number(),
  costUnknown: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
  finishedAt: z.date().nullable(),
};

export const zRunListPage = zPage(
  z.object({
    ...zRunColumns,
    stackName: z.string().nullable(),
    repository: zRepositoryRef,
    pullRequest: z.object({ number: z.number().int(), title: z.string() }).nullable(),
  }),
);

/**
 * A page of a run's transcript: each event's type and payload as the catalogue validated them
 * when it was appended (server/domain/events/append.ts), parsed with it again on the way out.
 */
export const zRunEvents = z.array(storedJson(zRunEventInput.and(z.object({ seq: z.number().int(), attemptId: z.string().nullable(), createdAt: z.date() }))));

/** One artifact with its content, cut to fit a response (server/domain/runs/detail.ts), and what redaction masked in it. */
export const zRunArtifact = z.object({
  id: z.string(),
  kind: storedEnum(ArtifactKind),
  name: z.string(),
  mediaType: z.string(),
  digest: z.string(),
  sizeBytes: z.number().int(),
  location: z.string().nullable(),
  createdAt: z.date(),
  content: z.string().nullable(),
  truncated: z.boolean(),
  masked: z.array(zRedactionEntry),
});

/** A write-back the page offers, and why not (allowed with no reason, or refused with one). */
const zOffer = { allowed: z.boolean(), reason: z.string().nullable() };
const zRunControl = z.object({ enabled: z.boolean(), reason: z.string().nullable(), detail: z.string().nullable() });

const zLabelledName = z.object({ name: z.string() });

/** The run page's read of the context bundle (server/domain/runs/view-model.ts). */
const zContextView = z.object({
  sourceUrl: z.string().nullable(),
  sourceDetail: z.string().nullable(),
  deliveryId: z.string().nullable(),
  labels: z.array(z.string()),
  changedFiles: z.array(z.string()),
  contextLabels: z.array(z.object({ label: z.string(), provenance: z.string().nullable(), bytes: z.number().nullable() })),
  logExcerpts: z.array(z.object({ name: z.string(), startLine: z.number(), text: z.string() })),
  ciArtifacts: z.array(z.object({ name: z.string(), type: z.string().nullable(), url: z.string().nullable(), digest: z.string().nullable() })),
  failure: z.object({ signature: z.string().nullable(), testNames: z.array(z.string()), errorLines: z.array(z.string()) }).nullable(),
  identity: z
    .object({
      runnerPool: z.string().nullable(),
      runtimeServiceAccount: z.string().nullable(),
      runnerServiceAccount: z.string().nullable(),
      nativeRoles: z.array(z.string()),
      secretGrants: z.array(z.string()),
      configMapGrants: z.array(z.string()),
    })
    .nullable(),
  redaction: z.string().nullable(),
});

const zPipelineRef = { id: z.string(), status: z.enum(PipelineStatus), headSha: z.string(), url: z.string().nullable(), checkName: z.string(), externalId: z.string(), conclusion: z.enum(CheckConclusion).nullable() };

/** /runs/<id>: the run and everything the page shows on first paint (server/domain/runs/detail.ts). */
export const zRunDetail = z.object({
  ...zRunColumns,
  repositoryId: z.string(),
  dedupeKey: z.string(),
  pullRequestId: z.string().nullable(),
  pipelineId: z.string().nullable(),
  jobId: z.string().nullable(),
  triggerRuleId: z.string().nullable(),
  actorUserId: z.string().nullable(),
  originReason: z.string().nullable(),
  stackId: z.string().nullable(),
  stackVersion: z.number().int().nullable(),
  stackDigest: z.string(),
  contextDigest: z.string(),
  prompt: z.string(),
  promptHash: z.string(),
  parentRunId: z.string().nullable(),
  runnerPoolId: z.string().nullable(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  lastEventSeq: z.number().int(),
  traceParent: z.string().nullable(),
  startedAt: z.date().nullable(),
  approvals: z.array(z.object({ ...zApprovalRow, presented: storedJson(zPresented), decidedBy: zPerson.extend({ id: z.string() }).nullable(), approveRefusal: z.string().nullable() })),
  attempts: z.array(
    z.object({
      id: z.string(),
      runId: z.string(),
      number: z.number().int(),
      status: z.enum(AttemptStatus),
      runnerPoolId: z.string().nullable(),
      runnerPool: z.object({ id: z.string(), name: z.string(), kind: z.enum(PoolKind), trustTier: z.enum(TrustTier) }).nullable(),
      costUsd: z.number(),
      costUnknown: z.string().nullable(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      queuedAt: z.date(),
      startedAt: z.date().nullable(),
      heartbeatAt: z.date().nullable(),
      finishedAt: z.date().nullable(),
      fencingToken: z.number().int(),
      runtimeServiceAccount: z.string().nullable(),
      runnerServiceAccount: z.string().nullable(),
      workspacePath: z.string().nullable(),
      adapterSessionId: z.string().nullable(),
      agentSessionId: z.string().nullable(),
      runnerRef: z.string().nullable(),
      exitReason: z.string().nullable(),
      sandbox: z
        .object({ started: zSandboxStarted.nullable(), blocked: z.array(zSandboxBlocked), blockedTotal: z.number().int(), ended: zSandboxEnded.nullable(), metered: zSandboxMetered.nullable() })
        .nullable(),
    }),
  ),
  duplicateTriggersDropped: z.number().int(),
  droppedTriggers: z.object({
    total: z.number().int(),
    items: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(["duplicate", "superseded"]),
        reason: z.string(),
        ruleId: z.string().nullable(),
        at: z.date(),
        deliveryId: z.string().nullable(),
        delivery: z.object({ deliveryId: z.string(), source: z.enum(ForgeKind), event: z.string(), action: z.string().nullable(), receivedAt: z.date() }).nullable(),
      }),
    ),
  }),
  runnerPool: z
    .object({ id: z.string(), name: z.string(), kind: z.enum(PoolKind), trustTier: z.enum(TrustTier), runtimeServiceAccount: zLabelledName, runnerServiceAccount: zLabelledName })
    .nullable(),
  context: zContextView,
  stack: z.object({ name: z.string().nullable(), version: z.number().nullable(), spec: zStackSpec.nullable() }),
  // The view types the tier as text; it is the payload's enum.
  admission: zAdmissionPayload.omit({ policyDecisionId: true }).extend({ trustTier: storedEnum(TrustTier).nullable() }).nullable(),
  viewerRole: z.enum(RepoRole),
  diagnosisComment: z.object(zOffer),
  review: z.object(zOffer),
  rerun: z.object({ ...zOffer, step: z.object({ supported: z.boolean(), why: z.string() }) }),
  openPr: z.object({ ...zOffer, shown: z.boolean(), defaultBranch: z.string() }),
  publishRelease: z.object({ ...zOffer, shown: z.boolean(), tag: z.string().nullable() }),
  terminal: z.boolean(),
  controls: z.object(Object.fromEntries(runControlNames.map((name) => [name, zRunControl])) as Record<RunControlName, typeof zRunControl>),
  repository: zRepositoryRef.extend({ defaultBranch: z.string(), forge: z.enum(ForgeKind), cloneUrl: z.string(), twoPersonRule: z.boolean() }),
  pullRequest: z
    .object({
      id: z.string(),
      repositoryId: z.string(),
      number: z.number().int(),
      title: z.string(),
      body: z.string(),
      author: z.string(),
      url: z.string().nullable(),
      state: z.string(),
      labels: z.array(z.string()),
      headRef: z.string(),
      headSha: z.string(),
      baseRef: z.string(),
      baseSha: z.string().nullable(),
      headRepoFullName: z.string().nullable(),
      isFork: z.boolean(),
      changedFiles: z.array(z.string()),
      reviewState: z.string().nullable(),
      mergeable: z.boolean().nullable(),
      escalatedAt: z.date().nullable(),
      createdAt: z.date(),
      updatedAt: z.date(),
    })
    .nullable(),
  pipeline: z
    .object({
      ...zPipelineRef,
      repositoryId: z.string(),
      pullRequestId: z.string().nullable(),
      headBranch: z.string().nullable(),
      workflowName: z.string(),
      event: z.string().nullable(),
      triggeredByRunId: z.string().nullable(),
      createdAt: z.date(),
      startedAt: z.date().nullable(),
      completedAt: z.date().nullable(),
    })
    .nullable(),
  job: z
    .object({
      id: z.string(),
      pipelineId: z.string(),
      externalId: z.string(),
      name: z.string(),
      status: z.enum(PipelineStatus),
      conclusion: z.enum(CheckConclusion).nullable(),
      runnerPool: z.string().nullable(),
      image: z.string().nullable(),
      step: z.string().nullable(),
      exitCode: z.number().int().nullable(),
      durationMs: z.number().int().nullable(),
      failureSignature: z.string().nullable(),
      failingTests: z.array(z.string()),
      logExcerpt: z.string(),
      logExcerptStartLine: z.number().int(),
      createdAt: z.date(),
    })
    .nullable(),
  triggerRule: z.object({ id: z.string(), name: z.string(), kind: z.enum(TriggerKind), action: z.enum(TriggerAction) }).nullable(),
  parentRun: z.object({ id: z.string(), number: z.number().int(), title: z.string() }).nullable(),
  childRuns: z.array(zRunRef),
  artifacts: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(ArtifactKind),
      name: z.string(),
      digest: z.string(),
      sizeBytes: z.number().int(),
      mediaType: z.string(),
      attemptId: z.string().nullable(),
      createdAt: z.date(),
      retainUntil: z.date().nullable(),
    }),
  ),
  writeBacks: z.array(zRunWriteBack),
  decisions: z.array(z.object({ id: z.string(), subject: z.string(), property: z.string(), value: storedJson(zScalar), ruleName: z.string().nullable(), createdAt: z.date() })),
  rerunPipelines: z.array(z.object(zPipelineRef)),
});
