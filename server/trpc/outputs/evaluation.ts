import { z } from "zod";
import { RunSource, TaskKind, TriggerAction, TriggerKind } from "@/server/db/generated/enums";
import { zBundleIdentity, zBundlePolicy } from "@/server/domain/context/context-bundle";
import { PROMPT_VARIABLE_NAMES, type PromptVariable } from "@/server/domain/context/prompt";
import { zRedactionReport } from "@/server/domain/context/redaction/report";
import { zPreviewSource } from "@/server/domain/stacks/schemas";
import { zAdapter, zMcpServer, zStackLimits, zStackSpec, zSubagent } from "@/server/domain/stacks/spec-schema";
import { MATCH_KEYS } from "@/server/domain/triggers/trigger-rule";
import { RELEASE_GAP_KINDS } from "@/server/domain/triggers/release-facts";

// What the evaluation pages read (server/domain/evaluation/): a stack previewed against a
// recorded failure, and a trigger rule dry-run over recent recorded events. Nothing is stored.

/** A recorded event, named as the preview and the dry run name it (the preview's input takes it back). */
const zRecordedEventRef = zPreviewSource;

export const zPreviewSources = z.array(
  z.object({
    ref: zRecordedEventRef,
    label: z.string(),
    at: z.date(),
    problem: z.string().nullable(),
    summary: z
      .object({ workflow: z.string().nullable(), job: z.string().nullable(), step: z.string().nullable(), headSha: z.string(), branch: z.string().nullable(), pullRequest: z.number().int().nullable() })
      .nullable(),
  }),
);

/** The Claude Code command line and generated files a run would start with (secrets by name). */
const zLaunchPlan = z.object({
  argv: z.array(z.string()),
  files: z.array(z.object({ name: z.string(), content: z.string() })),
  env: z.array(z.object({ name: z.string(), from: z.string() })),
  withheld: z.array(z.string()),
});

export const zStackPreview = z.object({
  source: z.object({ label: z.string(), fromJobRow: z.boolean() }),
  candidate: z.object({
    ruleName: z.string(),
    hypothetical: z.boolean(),
    taskKind: z.enum(TaskKind),
    action: z.enum(TriggerAction),
    reason: z.string(),
    unmatched: z.array(z.object({ ruleName: z.string(), reason: z.string() })),
  }),
  stack: z.object({
    id: z.string(),
    name: z.string(),
    version: z.number().int(),
    saved: z.boolean(),
    digest: z.string(),
    model: z.string(),
    adapter: zAdapter,
    toolProfile: z.string(),
    tools: z.array(z.string()),
    mcpServers: z.array(zMcpServer),
    skills: z.array(z.string()),
    subagents: z.array(zSubagent),
    approvalMode: zStackSpec.shape.approvalMode.unwrap(),
    limits: zStackLimits,
    launch: zLaunchPlan.nullable(),
  }),
  policy: zBundlePolicy,
  identity: zBundleIdentity,
  contextLabels: z.array(z.string()),
  contextDigest: z.string(),
  prompt: z.string(),
  promptHash: z.string(),
  variables: z.array(z.enum(PROMPT_VARIABLE_NAMES as [PromptVariable, ...PromptVariable[]])),
  redaction: zRedactionReport.shape.status,
});

const dryRunOutcomes = ["create", "duplicate", "superseded", "skipped", "refused", "unusable"] as const;

export const zDryRun = z.object({
  ruleId: z.string(),
  kind: z.enum(TriggerKind),
  disabled: z.boolean(),
  scope: z.string(),
  examined: z.number().int(),
  otherKinds: z.number().int(),
  events: z.array(
    z.object({
      ref: zRecordedEventRef,
      label: z.string(),
      at: z.date(),
      repository: z.string().nullable(),
      outcome: z.enum(dryRunOutcomes),
      reason: z.string(),
      precedence: z.string().nullable(),
      candidate: z
        .object({ taskKind: z.enum(TaskKind), action: z.enum(TriggerAction), dedupeKey: z.string(), source: z.enum(RunSource), reason: z.string(), matchedOn: z.array(z.enum(MATCH_KEYS)),
          keyVerdicts: z.array(z.object({ key: z.string(), matched: z.boolean(), detail: z.string() })),
          gaps: z.array(z.object({ id: z.string(), kind: z.enum(RELEASE_GAP_KINDS), subject: z.string(), detail: z.string() })),
        })
        .nullable(),
      duplicateOf: z.union([z.object({ runId: z.string(), number: z.number().int() }), z.object({ event: z.string() })]).nullable(),
    }),
  ),
  summary: z.object(Object.fromEntries(dryRunOutcomes.map((o) => [o, z.number().int()])) as Record<(typeof dryRunOutcomes)[number], z.ZodNumber>),
});
