import { z } from "zod";
import { ArtifactKind, AttemptStatus, RunStatus, TrustTier, WriteBackKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { boundText, type JsonLimits } from "@/server/lib/text-boundary";
import { zSandboxPayload } from "@/server/execution/sandbox/events";

// The RunEvent catalogue: one zod payload schema per event type. A RunEvent row
// stores `type` and `payload`; everything that appends one (services, adapters,
// the queue) validates against this, and the transcript UI renders from it.

/** Longest text kept in one event; longer text is cut with a marker (see truncateText). */
export const maxEventTextChars = 64 * 1024;

/**
 * The text boundary for one event's payload (see server/lib/text-boundary.ts): a tool call's
 * input, the deepest and largest part of any event, stays within these with visible markers.
 */
export const eventPayloadLimits: Partial<JsonLimits> = { maxDepth: 32, maxStringChars: maxEventTextChars, maxTotalChars: 256 * 1024, maxKeyChars: 200 };

const zId = z.string().min(1).max(200);
const zText = z.string().max(maxEventTextChars + 100);
const zIsoTime = z.iso.datetime({ offset: true });
const zCount = z.number().int().min(0);
export const zDigest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "Expected sha256:<64 hex digits>");

// Prisma's generated enums, as zod so payloads validate.
export const zRunStatus = z.enum(RunStatus);
export const zAttemptStatus = z.enum(AttemptStatus);
export const zArtifactKind = z.enum(ArtifactKind);
export const zWriteBackKind = z.enum(WriteBackKind);
export const zTrustTier = z.enum(TrustTier);

// Events emitted inside a subagent carry its id, so the UI can nest them.
const subagentScope = { subagentId: zId.optional() };

export const zMessagePayload = z.object({
  role: z.enum(["assistant", "user", "system"]),
  /** Markdown. */
  text: zText,
  ...subagentScope,
});

export const zToolCallPayload = z.object({
  id: zId,
  name: z.string().min(1).max(200),
  input: z.unknown(),
  startedAt: zIsoTime,
  ...subagentScope,
});

export const zToolResultPayload = z.object({
  toolCallId: zId,
  output: zText,
  isError: z.boolean(),
  /** Absent when the call's start was not seen (e.g. a transcript joined mid-way). */
  durationMs: zCount.optional(),
  ...subagentScope,
});

/** The model's reasoning (Claude's thinking blocks): shown collapsed, never as the answer. */
export const zThinkingPayload = z.object({
  text: zText,
  ...subagentScope,
});

/** A tool call the agent's own permission rules refused (Claude Code's permission_denials). */
export const zPermissionDeniedPayload = z.object({
  toolName: z.string().min(1).max(200),
  toolCallId: zId.optional(),
  input: z.unknown(),
  ...subagentScope,
});

const zSubagentBase = z.object({
  id: zId,
  name: z.string().min(1).max(200),
  /** The enclosing subagent, or null at the top level: events form a tree. */
  parentId: zId.nullable(),
  summary: zText.optional(),
});
export const zSubagentStartedPayload = zSubagentBase;
export const zSubagentCompletedPayload = zSubagentBase.extend({
  isError: z.boolean().default(false),
});

export const zArtifactProducedPayload = z.object({
  /** Set once the artifact is stored; an adapter reports it before that. */
  artifactId: zId.optional(),
  kind: zArtifactKind,
  /** Path relative to the artifacts folder, e.g. "fix.patch". */
  name: z.string().min(1).max(500),
  digest: zDigest,
  sizeBytes: zCount,
  mediaType: z.string().max(200).optional(),
});

const zTarget = z.object({
  branch: z.string().max(300).optional(),
  prNumber: z.number().int().positive().optional(),
  check: z.string().max(300).optional(),
  headSha: z.string().max(64).optional(),
});

export const zApprovalRequestedPayload = z.object({
  approvalId: zId,
  action: zWriteBackKind,
  target: zTarget,
  artifactId: zId.optional(),
  artifactDigest: zDigest.optional(),
  /** Why approval is needed: the change-gate rule's explanation. */
  reason: z.string().max(2000),
  expiresAt: zIsoTime.optional(),
});

export const zWriteBackRequestedPayload = z.object({
  approvalId: zId.optional(),
  action: zWriteBackKind,
  target: zTarget,
  artifactDigest: zDigest.optional(),
});

export const zWriteBackCompletedPayload = z.object({
  writeBackId: zId,
  approvalId: zId.optional(),
  action: zWriteBackKind,
  outcome: z.enum(["succeeded", "failed"]),
  /** Commit SHA, comment URL, workflow run id... */
  externalRef: z.string().max(500).optional(),
  error: z.string().max(4000).optional(),
});

export const zStatusPayload = z.discriminatedUnion("scope", [
  z.object({
    scope: z.literal("run"),
    from: zRunStatus.nullable(),
    to: zRunStatus,
    reason: z.string().max(2000),
  }),
  z.object({
    scope: z.literal("attempt"),
    attemptNumber: z.number().int().positive(),
    from: zAttemptStatus.nullable(),
    to: zAttemptStatus,
    reason: z.string().max(2000),
  }),
]);

export const zQueuePayload = z.discriminatedUnion("phase", [
  z.object({ phase: z.literal("queued"), attemptNumber: z.number().int().positive(), poolName: z.string().optional() }),
  z.object({
    phase: z.literal("dequeued"),
    attemptNumber: z.number().int().positive(),
    poolName: z.string().optional(),
    waitMs: zCount,
  }),
]);

export const zHeartbeatPayload = z.object({
  /** Adapter session id, when the heartbeat comes from a session. */
  sessionId: zId.optional(),
});

/** Cumulative totals for the attempt so far: the latest cost event wins. */
export const zCostPayload = z.object({
  inputTokens: zCount,
  outputTokens: zCount,
  cacheReadTokens: zCount.optional(),
  cacheWriteTokens: zCount.optional(),
  /** Absent while unknown: a model without a price (see unpricedModel) and no figure from the agent. */
  usd: z.number().min(0).optional(),
  /** Where usd comes from: the CLI's own total, Airlock's price table (an estimate), or the agent's event. */
  usdBasis: z.enum(["cli", "price_table", "agent"]).optional(),
  /** The model(s) Airlock has no price for, when usd is absent because of them. */
  unpricedModel: z.string().max(200).optional(),
  model: z.string().max(200).optional(),
});

/**
 * One model call (one assistant message) of an agent session: its model, its own usage and when
 * it ran (from the input it answered, the session's start or the last tool result, to its last
 * line). Not cumulative: the cost event carries the attempt's totals.
 */
export const zModelCallPayload = z.object({
  messageId: zId,
  model: z.string().min(1).max(200),
  inputTokens: zCount,
  outputTokens: zCount,
  cacheReadTokens: zCount,
  cacheWriteTokens: zCount,
  startedAt: zIsoTime,
  durationMs: zCount,
  ...subagentScope,
});

export const zLogPayload = z.object({
  /** stdout/stderr of the agent process; system = Airlock's own notes. */
  stream: z.enum(["stdout", "stderr", "system"]),
  text: zText,
});

export const zTriggerMatchedPayload = z.object({
  ruleId: zId,
  ruleName: z.string().max(300),
  triggerKind: z.string().max(50),
  dedupeKey: z.string().max(500),
  deliveryId: zId.optional(),
  /** Release rules: each release key's verdict, what it saw and whether it matched (triggers/release-keys.ts). */
  keys: z.array(z.object({ key: z.string().max(50), matched: z.boolean(), detail: z.string().max(1000) })).max(20).optional(),
  /** Release rules: the readiness gaps found, each an approval item on the run. */
  gaps: z.array(z.object({ id: z.string().max(300), detail: z.string().max(1000) })).max(50).optional(),
  /** Other rules matched the same failure: which fired and why (triggers/precedence.ts). */
  precedence: z
    .object({
      why: z.string().max(2000),
      competitors: z
        .array(
          z.object({
            ruleId: zId,
            ruleName: z.string().max(300),
            scope: z.enum(["repository", "global"]),
            keys: zCount,
            outcome: z.enum(["fires", "superseded"]),
          }),
        )
        .max(50),
    })
    .optional(),
});

export const zDispatchSkippedPayload = z.object({
  reason: z.string().max(2000),
  dedupeKey: z.string().max(500).optional(),
  ruleId: zId.optional(),
  existingRunId: zId.optional(),
});

export const zContextAssembledPayload = z.object({
  digest: zDigest,
  promptHash: z.string().max(100),
  sizeBytes: zCount,
  labels: z.array(z.string().max(200)).max(200),
  redactions: zCount,
  truncated: z.boolean(),
});

export const zAdmissionPayload = z.object({
  admitted: z.boolean(),
  poolName: z.string().max(200).nullable(),
  trustTier: zTrustTier.nullable(),
  runtimeServiceAccount: z.string().max(253).nullable(),
  runnerServiceAccount: z.string().max(253).nullable(),
  secretsGranted: z.array(z.string().max(253)),
  secretsDenied: z.array(z.object({ name: z.string().max(253), reason: z.string().max(500) })),
  configMapsGranted: z.array(z.string().max(253)),
  policyDecisionId: zId.optional(),
  /** One line a person can read: the winning rule's explanation. */
  summary: z.string().max(2000),
});

/**
 * One MCP server's health check before launch (server/execution/agents/claude-code/mcp-health.ts):
 * a stdio server answered initialize and tools/list, an http one the same over streamable HTTP,
 * or why not. Written by the worker; an agent cannot emit it.
 */
export const zMcpHealthPayload = z.object({
  server: z.string().min(1).max(80),
  transport: z.enum(["stdio", "http", "sse"]),
  required: z.boolean(),
  ok: z.boolean(),
  /** The tools the server listed, when it answered. */
  toolCount: zCount.optional(),
  /** Why the check failed (redacted, one line). */
  reason: z.string().max(1000).optional(),
  durationMs: zCount,
  /** What the launch did about it. */
  outcome: z.enum(["included", "left_out", "refused_launch"]),
});

/** A person attached a note, a link or a file excerpt to the run (redacted before it is stored). */
export const zContextAttachedPayload = z.object({
  attachmentId: zId,
  kind: z.enum(["note", "link", "file_excerpt"]),
  title: z.string().max(200),
  url: z.string().max(2_000).nullable(),
  path: z.string().max(500).nullable(),
  startLine: zCount.nullable(),
  text: zText,
  attachedBy: z.string().max(320),
  redactions: zCount,
});

const event = <T extends string, P extends z.ZodType>(type: T, payload: P) =>
  z.object({ type: z.literal(type), payload });

export const zMessageEvent = event("message", zMessagePayload);
export const zToolCallEvent = event("tool_call", zToolCallPayload);
export const zToolResultEvent = event("tool_result", zToolResultPayload);
export const zThinkingEvent = event("thinking", zThinkingPayload);
export const zPermissionDeniedEvent = event("permission_denied", zPermissionDeniedPayload);
export const zSubagentStartedEvent = event("subagent_started", zSubagentStartedPayload);
export const zSubagentCompletedEvent = event("subagent_completed", zSubagentCompletedPayload);
export const zArtifactProducedEvent = event("artifact_produced", zArtifactProducedPayload);
export const zHeartbeatEvent = event("heartbeat", zHeartbeatPayload);
export const zCostEvent = event("cost", zCostPayload);
export const zModelCallEvent = event("model_call", zModelCallPayload);
export const zLogEvent = event("log", zLogPayload);

/** What an agent session may emit. Everything else is Airlock's to say. */
export const zAgentEvent = z.discriminatedUnion("type", [
  zMessageEvent,
  zToolCallEvent,
  zToolResultEvent,
  zThinkingEvent,
  zPermissionDeniedEvent,
  zSubagentStartedEvent,
  zSubagentCompletedEvent,
  zArtifactProducedEvent,
  zHeartbeatEvent,
  zCostEvent,
  zModelCallEvent,
  zLogEvent,
]);

export const zRunEventInput = z.discriminatedUnion("type", [
  ...zAgentEvent.options,
  event("approval_requested", zApprovalRequestedPayload),
  event("write_back_requested", zWriteBackRequestedPayload),
  event("write_back_completed", zWriteBackCompletedPayload),
  event("status", zStatusPayload),
  event("queue", zQueuePayload),
  event("trigger_matched", zTriggerMatchedPayload),
  event("dispatch_skipped", zDispatchSkippedPayload),
  event("context_assembled", zContextAssembledPayload),
  event("admission", zAdmissionPayload),
  event("context_attached", zContextAttachedPayload),
  // What the attempt's sandbox enforced, refused and ended (server/execution/sandbox/events.ts).
  event("sandbox", zSandboxPayload),
  event("mcp_health", zMcpHealthPayload),
]);

export type RunEventInput = z.infer<typeof zRunEventInput>;
export type AgentEvent = z.infer<typeof zAgentEvent>;
export type RunEventType = RunEventInput["type"];
export type RunEventPayload<T extends RunEventType> = Extract<RunEventInput, { type: T }>["payload"];

export const runEventTypes = zRunEventInput.options.map((o) => o.shape.type.value) as RunEventType[];
export const agentEventTypes = zAgentEvent.options.map((o) => o.shape.type.value) as AgentEvent["type"][];

export function isRunEventType(value: unknown): value is RunEventType {
  return typeof value === "string" && (runEventTypes as string[]).includes(value);
}

export function isAgentEventType(value: unknown): value is AgentEvent["type"] {
  return typeof value === "string" && (agentEventTypes as string[]).includes(value);
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

export type EventValidation<T> = { ok: true; event: T } | { ok: false; error: string };

/** Validates without throwing; the error is one readable line. */
export function safeValidateRunEvent(input: unknown): EventValidation<RunEventInput> {
  const parsed = zRunEventInput.safeParse(input);
  return parsed.success ? { ok: true, event: parsed.data } : { ok: false, error: describeIssues(parsed.error) };
}

export function safeValidateAgentEvent(input: unknown): EventValidation<AgentEvent> {
  const parsed = zAgentEvent.safeParse(input);
  return parsed.success ? { ok: true, event: parsed.data } : { ok: false, error: describeIssues(parsed.error) };
}

/** Validates (and applies defaults), or throws AppError BAD_REQUEST "invalid_event". */
export function validateRunEvent(input: unknown): RunEventInput {
  const result = safeValidateRunEvent(input);
  if (result.ok) return result.event;
  const type = typeof input === "object" && input !== null ? (input as { type?: unknown }).type : undefined;
  throw new AppError("BAD_REQUEST", `Invalid run event${typeof type === "string" ? ` "${type}"` : ""}: ${result.error}`, {
    reason: "invalid_event",
  });
}

/**
 * Cuts text to `max` characters with the text boundary's visible marker (`…[cut: 2.1 MB]`), and
 * cleans what PostgreSQL cannot store, so an event stays bounded and storable.
 */
export function truncateText(text: string, max = maxEventTextChars): string {
  return boundText(text, max);
}
