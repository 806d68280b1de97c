import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { runsAnywhere } from "@/server/execution/agents/testing/processes";
import { getDb } from "@/server/db";
import { zPresented } from "@/server/domain/approvals/schemas";
import { requestWriteBack } from "@/server/domain/approvals/request-write-back";
import { zAttemptLaunch } from "@/server/domain/runs/schemas";
import { installedClaudeBinary } from "@/server/execution/agents/claude-code/claude-code-adapter";
import { type DoubleTurn, lastUserText, type RecordedRequest } from "@/server/execution/agents/testing/messages-api-double";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { closeClaudeCodeRun, runClaudeCodeStack, testHostAddress } from "@/server/queue/testing/claude-code-run";

// A run of a claude-code stack through the worker: admission grants the API key and base URL,
// the real `claude` runs in the pool's bubblewrap sandbox and reaches the Messages-API TEST
// DOUBLE through the egress proxy (the pool lists the double's address), and what the CLI says
// lands on the attempt: its session id, its own token and dollar totals, its error subtype.

afterEach(closeClaudeCodeRun);

const runStack = (respond: (req: RecordedRequest) => DoubleTurn, patch: Partial<StackSpec> = {}) =>
  runClaudeCodeStack({ respond, spec: patch, files: { "sum.js": "export const sum = (a, b) => a - b;\n" }, prompt: "sum(1, 2) is -1: fix sum.js" });

describe.skipIf(!testHostAddress || !existsSync(installedClaudeBinary()))("a claude-code stack run by the worker", () => {
  it("stores Claude's session id and the CLI's own totals on the attempt", async () => {
    const { after, events, requests } = await runStack((req) => {
      if (!(req.body.tools ?? []).length) return { blocks: [{ type: "text", text: "title" }], usage: { input_tokens: 7, output_tokens: 2 } };
      return lastUserText(req).includes("fix sum.js")
        ? { blocks: [{ type: "thinking", thinking: "Look first." }, { type: "text", text: "Looking." }], usage: { input_tokens: 30, output_tokens: 11, cache_read_input_tokens: 200, cache_creation_input_tokens: 40 } }
        : { blocks: [{ type: "text", text: "done" }] };
    });
    const attempt = after.attempts[0]!;
    expect(attempt.status, attempt.exitReason ?? "").toBe("succeeded");
    expect(attempt.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    const result = events.findLast((e) => e.type === "cost")!.payload as { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; usd: number };
    // The attempt's totals equal the CLI's own (modelUsage, side requests included), counted once.
    expect(attempt.inputTokens).toBe(result.inputTokens + result.cacheReadTokens + result.cacheWriteTokens);
    expect(attempt.outputTokens).toBe(result.outputTokens);
    expect(Number(attempt.costUsd)).toBeCloseTo(result.usd, 6);
    expect(result.inputTokens).toBe(requests.reduce((n, r) => n + ((r.body.tools ?? []).length ? 30 : 7), 0));
    expect(events.some((e) => e.type === "thinking")).toBe(true);
    expect(requests.every((r) => r.headers["x-api-key"] === "sk-ant-double-run-key")).toBe(true);
    // The key never reaches the transcript.
    expect(JSON.stringify(events.map((e) => e.payload))).not.toContain("sk-ant-double-run-key");

    // What the agent ran with is stored on the attempt, and a write-back's approval shows it: names only.
    const record = zAttemptLaunch.parse(attempt.launchRecord);
    expect(record).toMatchObject({ adapter: "claude-code", model: "anthropic/claude-sonnet-4-5", tools: ["Read", "Edit"], secrets: ["anthropic-api-key"], configMaps: ["anthropic-base-url"], continuation: null });
    expect(record.command).toContain("--model=claude-sonnet-4-5");
    expect(record.files.map((f) => f.name)).toEqual(["settings.json", "mcp.json"]);
    expect(record.env).toContainEqual({ name: "ANTHROPIC_API_KEY", from: "secret anthropic-api-key, held by Airlock's model gateway outside the sandbox; the agent gets a placeholder" });
    expect(JSON.stringify(record)).not.toContain("sk-ant-double-run-key");
    const asked = await requestWriteBack({ db: getDb(), runId: after.id, action: "comment", target: { prNumber: 3 }, message: "sum subtracts." });
    expect(asked.kind).toBe("approval");
    const approval = await getDb().approvalRequest.findUniqueOrThrow({ where: { id: asked.kind === "approval" ? asked.approvalId : "" } });
    const presented = zPresented.parse(approval.presented);
    expect(presented.ranWith).toEqual({ attemptNumber: 1, launch: record });
    expect(JSON.stringify(approval.presented)).not.toContain("sk-ant-double-run-key");
  }, 120_000);

  it("an error result from the CLI fails the attempt with its error", async () => {
    const { after } = await runStack((req) =>
      (req.body.tools ?? []).length ? { error: { status: 400, type: "invalid_request_error", message: "the double refuses this run" } } : { blocks: [{ type: "text", text: "title" }] },
    );
    expect(after.attempts[0]).toMatchObject({ status: "failed" });
    expect(after.attempts[0]!.exitReason).toContain("the double refuses this run");
    expect(after.status).toBe("failed");
  }, 120_000);

  it("Airlock's meter stops the session at the cap from the assistant message's usage: process tree killed, the figures, no retry", async () => {
    const marker = `airlock-budget-${randomUUID()}`;
    const started = Date.now();
    // 200,000 input tokens on Sonnet 4.5 is $0.60 by the price table, past the $0.50 cap; the
    // same turn starts a Bash sleep, so the CLI's own budget check (after the tools) comes too late.
    const { after, events } = await runStack(
      (req) =>
        !(req.body.tools ?? []).length
          ? { blocks: [{ type: "text", text: "title" }] }
          : lastUserText(req).includes("fix sum.js")
            ? { blocks: [{ type: "tool_use", name: "Bash", input: { command: `sleep 300 # ${marker}` } }], stopReason: "tool_use", usage: { input_tokens: 200_000, output_tokens: 10 } }
            : { blocks: [{ type: "text", text: "done" }] },
      { tools: ["Bash"], limits: { wallClockMinutes: 2, maxCostUsd: 0.5, maxRetries: 2 } },
    );
    const attempt = after.attempts[0]!;
    expect(attempt.status).toBe("failed");
    // Whichever meter reading arrives first stops it: the CLI's report of the message, or the
    // model gateway's own reading of the model API's answer.
    expect(attempt.exitReason).toMatch(
      /^Cost cap reached: stopped at \$0\.6\d{3} of the \$0\.5000 cap \(Airlock's meter stopped the session, (estimated from Airlock's price table|metered by Airlock's model gateway from the model API's own usage)\)$/,
    );
    // The gateway metered the model API's answers itself, whatever the agent says of them.
    const metered = events.find((e) => e.type === "sandbox" && (e.payload as { phase: string }).phase === "metered")?.payload as
      | { calls: number; models: { model: string | null; inputTokens: number; outputTokens: number }[] }
      | undefined;
    expect(metered?.calls).toBeGreaterThanOrEqual(1);
    expect(metered?.models.find((m) => m.model === "claude-sonnet-4-5")?.inputTokens).toBeGreaterThanOrEqual(200_000);
    expect(Number(attempt.costUsd)).toBeGreaterThanOrEqual(0.6);
    expect(attempt.costUnknown).toBeNull();
    // Stopped within the kill grace, not after the 300 s sleep; the sleep is gone with the CLI.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(runsAnywhere(marker)).toBe(false);
    // A budget stop fails the run; no automatic retry spends more, though the stack allows 2.
    expect(after.attempts).toHaveLength(1);
    expect(after.status).toBe("failed");
    expect(events.some((e) => e.type === "log" && (e.payload as { text: string }).text.includes("The agent session is being stopped"))).toBe(true);
  }, 120_000);
});
