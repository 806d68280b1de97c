import { describe, expect, it } from "vitest";
import { ArtifactKind, AttemptStatus, RunStatus, TrustTier, WriteBackKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import {
  agentEventTypes,
  isRunEventType,
  type RunEventInput,
  type RunEventType,
  runEventTypes,
  safeValidateAgentEvent,
  safeValidateRunEvent,
  truncateText,
  validateRunEvent,
  zArtifactKind,
  zAttemptStatus,
  zRunStatus,
  zTrustTier,
  zWriteBackKind,
} from "./catalogue";

const digest = `sha256:${"ab".repeat(32)}`;
const at = "2026-03-01T10:00:00.000Z";

// One valid event per type; the first test checks this covers the catalogue.
const samples: { [T in RunEventType]: Extract<RunEventInput, { type: T }>["payload"] } = {
  message: { role: "assistant", text: "**Found it.**" },
  tool_call: { id: "t1", name: "Bash", input: { command: "npm test" }, startedAt: at },
  tool_result: { toolCallId: "t1", output: "1 failed", isError: true, durationMs: 1200 },
  thinking: { text: "The sign looks wrong." },
  permission_denied: { toolName: "Bash", toolCallId: "t2", input: { command: "rm -rf /" } },
  subagent_started: { id: "s1", name: "Explore", parentId: null, summary: "find callers" },
  subagent_completed: { id: "s1", name: "Explore", parentId: null, summary: "two callers", isError: false },
  artifact_produced: { kind: "patch", name: "fix.patch", digest, sizeBytes: 312 },
  heartbeat: {},
  cost: { inputTokens: 1000, outputTokens: 200, usd: 0.01 },
  model_call: { messageId: "msg_1", model: "claude-sonnet-4-5", inputTokens: 10, outputTokens: 20, cacheReadTokens: 300, cacheWriteTokens: 0, startedAt: "2026-03-01T10:00:00.000Z", durationMs: 1500 },
  log: { stream: "stderr", text: "warning" },
  mcp_health: { server: "sentry", transport: "http", required: true, ok: false, reason: "timed out after 10 s", durationMs: 10_000, outcome: "refused_launch" },
  sandbox: { phase: "blocked", host: "example.com", port: 443, at, reason: "not in the allowlist" },
  approval_requested: {
    approvalId: "a1",
    action: "push_commits",
    target: { branch: "fix/sum", prNumber: 7, headSha: "abc123" },
    artifactDigest: digest,
    reason: "Pushing commits always needs approval",
  },
  write_back_requested: { action: "comment", target: { prNumber: 7 } },
  write_back_completed: { writeBackId: "w1", action: "comment", outcome: "succeeded", externalRef: "comment-1" },
  status: { scope: "run", from: "running", to: "awaiting_approval", reason: "patch ready" },
  queue: { phase: "dequeued", attemptNumber: 1, poolName: "trusted-local", waitMs: 420 },
  trigger_matched: { ruleId: "r1", ruleName: "diagnose failed checks", triggerKind: "failed_check", dedupeKey: "k" },
  dispatch_skipped: { reason: "duplicate of an active run", dedupeKey: "k", existingRunId: "run1" },
  context_assembled: { digest, promptHash: "sha256:1", sizeBytes: 2048, labels: ["logs"], redactions: 1, truncated: false },
  admission: {
    admitted: true,
    poolName: "untrusted-local",
    trustTier: "untrusted",
    runtimeServiceAccount: "agent-runtime",
    runnerServiceAccount: "runner-unprivileged",
    secretsGranted: [],
    secretsDenied: [{ name: "NPM_TOKEN", reason: "privileged secrets never go to untrusted pools" }],
    configMapsGranted: [],
    summary: "Fork PR: untrusted pool",
  },
  context_attached: { attachmentId: "5d0c", kind: "link", title: "the red run", url: "https://ci.example/1", path: null, startLine: null, text: "", attachedBy: "maintainer@airlock.local", redactions: 0 },
};

describe("event catalogue", () => {
  it("has a sample for every type, and every sample validates", () => {
    expect(Object.keys(samples).sort()).toEqual([...runEventTypes].sort());
    expect(runEventTypes).toHaveLength(24);
    for (const [type, payload] of Object.entries(samples)) {
      const result = safeValidateRunEvent({ type, payload });
      expect(result, type).toMatchObject({ ok: true });
    }
  });

  it("keeps its enums in step with the Prisma schema", () => {
    expect(zRunStatus.options).toEqual(Object.values(RunStatus));
    expect(zAttemptStatus.options).toEqual(Object.values(AttemptStatus));
    expect(zArtifactKind.options).toEqual(Object.values(ArtifactKind));
    expect(zWriteBackKind.options).toEqual(Object.values(WriteBackKind));
    expect(zTrustTier.options).toEqual(Object.values(TrustTier));
  });

  it("applies defaults", () => {
    const event = validateRunEvent({ type: "subagent_completed", payload: { id: "s", name: "n", parentId: "p" } });
    expect(event.payload).toEqual({ id: "s", name: "n", parentId: "p", isError: false });
  });

  it.each([
    ["an unknown type", { type: "telemetry", payload: {} }],
    ["a missing payload", { type: "message" }],
    ["a bad role", { type: "message", payload: { role: "robot", text: "x" } }],
    ["a malformed digest", { type: "artifact_produced", payload: { kind: "patch", name: "p", digest: "abc", sizeBytes: 1 } }],
    ["a negative token count", { type: "cost", payload: { inputTokens: -1, outputTokens: 0 } }],
    ["a non-ISO start time", { type: "tool_call", payload: { id: "t", name: "Bash", input: {}, startedAt: "yesterday" } }],
    ["an attempt status in a run status change", { type: "status", payload: { scope: "run", from: null, to: "timed_out", reason: "x" } }],
    ["a dequeue without its wait", { type: "queue", payload: { phase: "dequeued", attemptNumber: 1 } }],
    ["an unknown write-back action", { type: "write_back_requested", payload: { action: "force_push", target: {} } }],
  ])("refuses %s", (_name, input) => {
    expect(safeValidateRunEvent(input).ok).toBe(false);
  });

  it("throws a BAD_REQUEST AppError naming the type and the field", () => {
    let err: unknown;
    try {
      validateRunEvent({ type: "log", payload: { stream: "tty", text: "x" } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "BAD_REQUEST", reason: "invalid_event" });
    expect((err as Error).message).toMatch(/^Invalid run event "log": payload\.stream: /);
  });

  it("lets agents emit only agent events", () => {
    expect(agentEventTypes).toEqual([
      "message",
      "tool_call",
      "tool_result",
      "thinking",
      "permission_denied",
      "subagent_started",
      "subagent_completed",
      "artifact_produced",
      "heartbeat",
      "cost",
      "model_call",
      "log",
    ]);
    expect(safeValidateAgentEvent({ type: "status", payload: samples.status }).ok).toBe(false);
    expect(safeValidateAgentEvent({ type: "cost", payload: samples.cost }).ok).toBe(true);
    expect(isRunEventType("admission")).toBe(true);
    expect(isRunEventType("assistant")).toBe(false);
  });

  it("bounds text: truncateText cuts with a marker that still validates", () => {
    expect(truncateText("short")).toBe("short");
    const long = truncateText("y".repeat(70_000));
    expect(long).toMatch(/…\[cut: 4\.5 kB\]$/);
    expect(safeValidateRunEvent({ type: "log", payload: { stream: "stdout", text: long } }).ok).toBe(true);
    expect(safeValidateRunEvent({ type: "log", payload: { stream: "stdout", text: "y".repeat(70_000) } }).ok).toBe(false);
  });
});

describe("the sandbox event", () => {
  it("is the worker's to write: no agent line can produce one", async () => {
    const { safeValidateAgentEvent } = await import("./catalogue");
    const forged = { type: "sandbox", payload: { phase: "ended", limit: null, reason: null, peakMemoryMb: 0, peakProcesses: 0, cpuSeconds: 0, blockedConnections: 0 } };
    expect(safeValidateAgentEvent(forged).ok).toBe(false);
    expect(safeValidateRunEvent(forged).ok).toBe(true);
  });
});
