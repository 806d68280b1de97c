import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type AgentEvent, zAgentEvent } from "@/server/domain/events/catalogue";
import { createClaudeStreamParser, isClaudeStreamMessage, parseClaudeTranscript } from "./claude-stream-json";

const transcript = (name: string) =>
  readFileSync(fileURLToPath(new URL(`./fixtures/claude/${name}`, import.meta.url)), "utf8");

/** A clock that moves one second per reading, so durations are predictable. */
function steppingClock(start = Date.parse("2026-03-01T10:00:00Z")) {
  let t = start - 1000;
  return () => new Date((t += 1000));
}

type PayloadOf<T extends AgentEvent["type"]> = Extract<AgentEvent, { type: T }>["payload"];
const ofType = <T extends AgentEvent["type"]>(events: AgentEvent[], type: T): Array<PayloadOf<T>> =>
  events.flatMap((e) => (e.type === type ? [e.payload as PayloadOf<T>] : []));

describe("Claude Code stream-json parser: a diagnosis transcript", () => {
  const events = parseClaudeTranscript(transcript("diagnose-sum.jsonl"), { now: steppingClock() });

  it("produces only valid catalogue events", () => {
    for (const event of events) expect(zAgentEvent.parse(event)).toEqual(event);
  });

  it("announces the session from the init message", () => {
    expect(events[0]).toEqual({
      type: "message",
      payload: {
        role: "system",
        text: "Claude Code session started · model `claude-sonnet-4-5-20250929` · 8 tools (Task, Bash, Glob, Grep, Read, Edit, Write, TodoWrite)",
      },
    });
  });

  it("maps assistant text to messages, tool uses to tool calls and results to tool results", () => {
    const messages = ofType(events, "message").filter((m) => m.role === "assistant" && !m.subagentId);
    expect(messages[0]?.text).toBe("I'll start by reproducing the failing check locally.");
    expect(messages.at(-1)?.text).toMatch(/^## Diagnosis/);

    const calls = ofType(events, "tool_call");
    expect(calls[0]).toMatchObject({ id: "toolu_01Bash1", name: "Bash", input: { command: "npx vitest run" } });
    expect(calls.find((c) => c.name === "Edit")?.input).toMatchObject({
      new_string: "  for (let i = 0; i < values.length; i++) {",
    });
    expect(calls[0]?.startedAt).toMatch(/^2026-03-01T10:00:\d\d\.000Z$/);

    const results = ofType(events, "tool_result");
    expect(results).toHaveLength(calls.length);
    expect(results[0]).toMatchObject({ toolCallId: "toolu_01Bash1", isError: true });
    expect(results[0]?.output).toContain("AssertionError: expected 3 to be 6");
    expect(results.find((r) => r.toolCallId === "toolu_01Read1")?.output).toContain("i < values.length - 1");
    for (const r of results) expect(r.durationMs).toBeGreaterThan(0);
  });

  it("measures a tool's duration between its call and its result", () => {
    const parser = createClaudeStreamParser({ now: steppingClock() });
    const lines = transcript("diagnose-sum.jsonl").trim().split("\n").map((l) => JSON.parse(l) as unknown);
    parser.parse(lines[0]); // init: reads t0 (the session's start)
    parser.parse(lines[1]); // text: t0 + 1 s
    const [call] = parser.parse(lines[2]) ?? []; // tool_use: t0 + 2 s
    const events = parser.parse(lines[3]) ?? []; // tool_result: t0 + 3 s
    expect(call).toMatchObject({ type: "tool_call", payload: { startedAt: "2026-03-01T10:00:02.000Z" } });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ type: "tool_result", payload: { durationMs: 1000 } });
  });

  it("turns a Task tool use into a subagent whose events are nested under it", () => {
    expect(ofType(events, "subagent_started")).toEqual([
      { id: "toolu_01Task1", name: "Explore", parentId: null, summary: "Find callers of sum()" },
    ]);
    const completed = ofType(events, "subagent_completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ id: "toolu_01Task1", name: "Explore", parentId: null, isError: false });
    expect(completed[0]?.summary).toContain("src/report.ts:6");

    const nested = events.filter((e) => "subagentId" in e.payload && e.payload.subagentId === "toolu_01Task1");
    expect(nested.map((e) => e.type)).toEqual(["message", "tool_call", "model_call", "tool_result", "message", "model_call"]);
    // The Task prompt handed to the subagent is the parent's words, not a person's.
    expect(nested[0]).toMatchObject({ payload: { role: "system", text: expect.stringMatching(/^Prompt from the parent agent to [\w-]+:\n\n[\s\S]*List every call site/) } });

    const order = events.map((e) => e.type);
    expect(order.indexOf("subagent_started")).toBeLessThan(order.indexOf("subagent_completed"));
  });

  it("reports running token totals per message, then the final usage and dollars", () => {
    const costs = ofType(events, "cost");
    // 8 distinct assistant messages (one of them spans two lines) + the result.
    expect(costs).toHaveLength(9);
    // Input is the uncached part: the attempt's total adds the cache split once (recordAttemptCost).
    expect(costs[0]).toEqual({
      inputTokens: 4,
      outputTokens: 3,
      cacheReadTokens: 11890,
      cacheWriteTokens: 5210,
      // Airlock's price table for Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per Mtok.
      usd: expect.closeTo((4 * 3 + 3 * 15 + 11890 * 0.3 + 5210 * 3.75) / 1e6, 10),
      usdBasis: "price_table",
      model: "claude-sonnet-4-5-20250929",
    });
    // The second line of msg_01Qx7 updated its output tokens from 3 to 96.
    expect(costs[1]?.outputTokens).toBe(96 + 142);
    // The running estimate only grows, message by message.
    const running = costs.slice(0, -1).map((c) => c.usd!);
    expect(running.every((usd, i) => i === 0 || usd >= running[i - 1]!)).toBe(true);
    expect(costs.slice(0, -1).every((c) => c.usdBasis === "price_table")).toBe(true);
    // The CLI's own total replaces the estimate.
    expect(costs.at(-1)).toEqual({
      inputTokens: 55,
      outputTokens: 889,
      cacheReadTokens: 109180,
      cacheWriteTokens: 11980,
      usd: 0.0841237,
      usdBasis: "cli",
      model: "claude-sonnet-4-5-20250929",
    });
  });

  it("reports each model call once, with its own usage (the message's last line), model and interval", () => {
    const calls = ofType(events, "model_call");
    // 8 distinct assistant messages: 6 of the main conversation, 2 of the subagent.
    expect(calls.map((c) => c.messageId)).toEqual(["msg_01Qx7", "msg_01Sub1", "msg_01Rk2", "msg_01Sub2", "msg_01Tm3", "msg_01Un4", "msg_01Vp5", "msg_01Wq6"]);
    // msg_01Qx7 spans two lines: its usage is the second's (96 output tokens, not 3), and it
    // answers the prompt, so it runs from the session's start (t0) to its last line (t0 + 2 s).
    expect(calls[0]).toEqual({
      messageId: "msg_01Qx7",
      model: "claude-sonnet-4-5-20250929",
      inputTokens: 4,
      outputTokens: 96,
      cacheReadTokens: 11890,
      cacheWriteTokens: 5210,
      startedAt: "2026-03-01T10:00:00.000Z",
      durationMs: 2000,
    });
    // A subagent's calls carry its id and the subagent's model; they end before it completes.
    expect(calls.filter((c) => c.subagentId === "toolu_01Task1").map((c) => c.model)).toEqual(["claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001"]);
    const order = events.map((e) => (e.type === "model_call" ? e.payload.messageId : e.type));
    expect(order.indexOf("msg_01Sub2")).toBeLessThan(order.indexOf("subagent_completed"));
    // Each call after the first starts at the tool result it answers, after the call before it.
    const main = calls.filter((c) => !c.subagentId);
    for (let i = 1; i < main.length; i++) expect(Date.parse(main[i]!.startedAt)).toBeGreaterThan(Date.parse(main[i - 1]!.startedAt) + main[i - 1]!.durationMs - 1);
    // The calls' output tokens add up to the session's main-conversation output.
    expect(main.reduce((n, c) => n + c.outputTokens, 0)).toBe(96 + 142 + 70 + 188 + 84 + 97);
  });

  it("remembers the session id and a successful outcome", () => {
    const parser = createClaudeStreamParser();
    for (const line of transcript("diagnose-sum.jsonl").trim().split("\n")) parser.parse(JSON.parse(line));
    expect(parser.sessionId).toBe("5b1f0c7e-3d2a-4c8e-9f61-2a7d0e4b9c13");
    expect(parser.outcome).toMatchObject({ isError: false, subtype: "success" });
  });
});

describe("Claude Code stream-json parser: errors and edge cases", () => {
  it("reports an error result, skips thinking blocks and lists MCP server health", () => {
    const parser = createClaudeStreamParser();
    const events = transcript("max-turns.jsonl")
      .trim()
      .split("\n")
      .flatMap((l) => parser.parse(JSON.parse(l)) ?? []);
    expect(events.map((e) => e.type)).toEqual(["message", "message", "cost", "model_call", "cost", "log"]);
    expect(events[0]?.payload).toMatchObject({ text: expect.stringContaining("MCP: github (failed)") });
    expect(events[1]?.payload).toEqual({ role: "assistant", text: "Let me look at the flaky test history." });
    expect(events[4]?.payload).toMatchObject({ usd: 0.0123 });
    expect(events[5]?.payload).toEqual({ stream: "system", text: "Claude Code finished with error_max_turns" });
    expect(parser.outcome).toEqual({ isError: true, subtype: "error_max_turns", errors: [], usd: 0.0123 });
  });

  it("returns null for anything that is not a Claude message", () => {
    const parser = createClaudeStreamParser();
    expect(parser.parse({ type: "message", payload: { role: "assistant", text: "hi" } })).toBeNull();
    expect(parser.parse({ type: "assistant" })).toBeNull(); // no message body
    expect(parser.parse("assistant")).toBeNull();
    expect(parser.parse(null)).toBeNull();
    expect(isClaudeStreamMessage({ type: "result", subtype: "success" })).toBe(true);
    expect(isClaudeStreamMessage({ type: "tool_call", payload: {} })).toBe(false);
  });

  it("ignores partial stream events and notes other system messages", () => {
    const parser = createClaudeStreamParser();
    expect(parser.parse({ type: "stream_event", event: { type: "content_block_delta" } })).toEqual([]);
    expect(parser.parse({ type: "system", subtype: "compact_boundary", session_id: "s" })).toEqual([
      { type: "log", payload: { stream: "system", text: "Claude Code: compact_boundary" } },
    ]);
  });

  it("handles a result whose call was never seen, non-text blocks and very long output", () => {
    const parser = createClaudeStreamParser();
    const events = parser.parse({
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_unknown", content: [{ type: "text", text: "a" }, { type: "image" }] },
          { type: "tool_result", tool_use_id: "toolu_big", content: "x".repeat(100_000) },
        ],
      },
    });
    expect(events?.[0]).toEqual({ type: "tool_result", payload: { toolCallId: "toolu_unknown", output: "a\n[image]", isError: false } });
    const big = events?.[1]?.payload as { output: string };
    expect(big.output.length).toBeLessThan(33_000);
    expect(big.output).toMatch(/…\[cut: 67\.2 kB\]$/);
  });

  it("nests a subagent started inside another subagent under its parent", () => {
    const parser = createClaudeStreamParser();
    const events = parser.parse({
      type: "assistant",
      parent_tool_use_id: "toolu_outer",
      message: { content: [{ type: "tool_use", id: "toolu_inner", name: "Agent", input: { description: "dig" } }] },
    });
    expect(events?.[1]).toEqual({
      type: "subagent_started",
      payload: { id: "toolu_inner", name: "general-purpose", parentId: "toolu_outer", summary: "dig" },
    });
  });
});

describe("Claude Code stream-json parser: fidelity to the CLI's result", () => {
  const result = (over: Record<string, unknown>) => ({ type: "result", subtype: "success", is_error: false, session_id: "s-1", ...over });

  it("fails error_during_execution even with is_error false, and keeps the CLI's errors", () => {
    const parser = createClaudeStreamParser();
    const events = parser.parse(result({ subtype: "error_during_execution", errors: ["API error: Overloaded"] })) ?? [];
    expect(parser.outcome).toEqual({ isError: true, subtype: "error_during_execution", errors: ["API error: Overloaded"] });
    expect(events).toContainEqual({ type: "log", payload: { stream: "system", text: "Claude Code finished with error_during_execution:\nAPI error: Overloaded" } });
  });

  it.each(["error_max_turns", "error_max_budget_usd", "error_max_structured_output_retries", "some_future_error"])("treats %s as a failure", (subtype) => {
    const parser = createClaudeStreamParser();
    parser.parse(result({ subtype, is_error: false }));
    expect(parser.outcome?.isError).toBe(true);
  });

  it("a success the CLI flags as an error (an API error) fails too", () => {
    const parser = createClaudeStreamParser();
    parser.parse(result({ is_error: true, result: "API Error: 400 refused" }));
    expect(parser.outcome).toMatchObject({ isError: true, subtype: "success", text: "API Error: 400 refused" });
  });

  it("totals come from modelUsage over every model (subagents, side requests), not the main usage", () => {
    const parser = createClaudeStreamParser();
    const events = parser.parse(
      result({
        total_cost_usd: 0.42,
        usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
        modelUsage: {
          "claude-sonnet-4-5": { inputTokens: 100, outputTokens: 600, cacheReadInputTokens: 1000, cacheCreationInputTokens: 50, costUSD: 0.4 },
          "claude-haiku-4-5": { inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0.02 },
        },
      }),
    );
    expect(events?.find((e) => e.type === "cost")?.payload).toEqual({
      inputTokens: 107,
      outputTokens: 603,
      cacheReadTokens: 1000,
      cacheWriteTokens: 50,
      usd: 0.42,
      usdBasis: "cli",
      model: "claude-sonnet-4-5, claude-haiku-4-5",
    });
  });

  it("each permission denial is its own event; thinking is kept; hook output is shown; token ticks are not", () => {
    const parser = createClaudeStreamParser();
    const denials = parser.parse(result({ permission_denials: [{ tool_name: "Bash", tool_use_id: "toolu_1", tool_input: { command: "rm -rf /" } }] })) ?? [];
    expect(denials[0]).toEqual({ type: "permission_denied", payload: { toolName: "Bash", toolCallId: "toolu_1", input: { command: "rm -rf /" } } });
    const thinking = parser.parse({ type: "assistant", parent_tool_use_id: "toolu_9", message: { content: [{ type: "thinking", thinking: "Check the sign.", signature: "x" }] } });
    expect(thinking).toEqual([{ type: "thinking", payload: { text: "Check the sign.", subagentId: "toolu_9" } }]);
    expect(parser.parse({ type: "system", subtype: "hook_response", hook_name: "lint", hook_event: "PostToolUse", stdout: "ok", stderr: "", exit_code: 0 })).toEqual([
      { type: "log", payload: { stream: "system", text: "Claude Code hook PostToolUse lint exited 0:\nok" } },
    ]);
    expect(parser.parse({ type: "system", subtype: "thinking_tokens", estimated_tokens: 3 })).toEqual([]);
  });
});

// Captures made here with the real CLI (@anthropic-ai/claude-code 2.1.197, the pinned version)
// against the Messages-API test double; the file names carry the version that made them.
describe("Claude Code stream-json parser: captures of CLI 2.1.197", () => {
  const parse = (name: string) => {
    const parser = createClaudeStreamParser();
    const events = transcript(`cli-2.1.197-${name}.jsonl`)
      .trim()
      .split("\n")
      .flatMap((l) => parser.parse(JSON.parse(l)) ?? []);
    for (const e of events) expect(zAgentEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
    return { parser, events };
  };
  const lastCost = (events: AgentEvent[]) => ofType(events, "cost").at(-1);

  it("plain: one answer, a successful outcome, the CLI's dollars", () => {
    const { parser, events } = parse("plain");
    expect(ofType(events, "message").map((m) => m.role)).toEqual(["system", "assistant"]);
    expect(parser.outcome).toMatchObject({ isError: false, subtype: "success" });
    expect(parser.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lastCost(events)?.usd).toBe(0.000105);
    expect(events.filter((e) => e.type === "log")).toEqual([]);
  });

  it("tools and thinking: thinking, Read/Edit/Bash calls with results, the denied Bash as a denial", () => {
    const { parser, events } = parse("tools-thinking");
    expect(ofType(events, "thinking")).toEqual([{ text: "Read the file first." }]);
    expect(ofType(events, "tool_call").map((c) => c.name)).toEqual(["Read", "Edit", "Bash"]);
    const results = ofType(events, "tool_result");
    expect(results).toHaveLength(3);
    expect(results[2]?.isError).toBe(true);
    expect(ofType(events, "permission_denied")).toEqual([{ toolName: "Bash", toolCallId: ofType(events, "tool_call")[2]!.id, input: { command: "rm -rf /tmp/x" } }]);
    expect(parser.outcome?.isError).toBe(false);
    // The totals are the CLI's modelUsage, once: the result's last cost event.
    const raw = JSON.parse(transcript("cli-2.1.197-tools-thinking.jsonl").trim().split("\n").at(-1)!) as { modelUsage: Record<string, { inputTokens: number; outputTokens: number }>; total_cost_usd: number };
    const mu = Object.values(raw.modelUsage);
    expect(lastCost(events)).toMatchObject({ inputTokens: mu.reduce((n, u) => n + u.inputTokens, 0), outputTokens: mu.reduce((n, u) => n + u.outputTokens, 0), usd: raw.total_cost_usd });
  });

  it("subagent: the Task prompt is the parent's, the subagent's events nest under it, task ticks are quiet", () => {
    const { events } = parse("subagent");
    const started = ofType(events, "subagent_started");
    expect(started).toEqual([expect.objectContaining({ name: "test-fixer", parentId: null, summary: "Find the bug" })]);
    const inside = events.filter((e) => "subagentId" in e.payload && e.payload.subagentId === started[0]!.id);
    expect(inside.map((e) => e.type)).toEqual(["message", "tool_call", "model_call", "tool_result"]);
    expect(inside[0]?.payload).toMatchObject({ role: "system", text: "Prompt from the parent agent to test-fixer:\n\nFind the bug in sum.js and report it" });
    expect(ofType(events, "subagent_completed")).toEqual([expect.objectContaining({ name: "test-fixer", isError: false, summary: expect.stringContaining("sum subtracts instead of adding") })]);
    expect(events.filter((e) => e.type === "log")).toEqual([]);
  });

  it("an API error: subtype success with is_error true fails, with the CLI's message", () => {
    const { parser, events } = parse("error-during-execution");
    expect(parser.outcome).toMatchObject({ isError: true, subtype: "success", text: "API Error: 400 the double refuses this request" });
    expect(ofType(events, "log").at(-1)?.text).toBe("Claude Code finished with an error:\nAPI Error: 400 the double refuses this request");
  });

  it("max turns: error_max_turns with the CLI's error line", () => {
    const { parser, events } = parse("max-turns");
    expect(parser.outcome).toMatchObject({ isError: true, subtype: "error_max_turns", errors: ["Reached maximum number of turns (2)"] });
    expect(ofType(events, "log").at(-1)?.text).toBe("Claude Code finished with error_max_turns:\nReached maximum number of turns (2)");
  });
});
