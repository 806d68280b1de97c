import { describe, expect, it } from "vitest";
import { createOutputDecoder } from "./output-decoder";

const airlockLine = JSON.stringify({ type: "message", payload: { role: "assistant", text: "hi" } });
const claudeLine = JSON.stringify({
  type: "assistant",
  session_id: "s-1",
  message: { id: "m1", content: [{ type: "text", text: "from claude" }] },
});

describe("output decoder", () => {
  it("detects Airlock events and Claude messages line by line in the same stream", () => {
    const decoder = createOutputDecoder();
    expect(decoder.decodeLine(airlockLine)).toEqual([
      { type: "message", payload: { role: "assistant", text: "hi" } },
    ]);
    expect(decoder.decodeLine(claudeLine)).toEqual([
      { type: "message", payload: { role: "assistant", text: "from claude" } },
    ]);
  });

  it("keeps non-JSON, non-object JSON and unknown JSON as stdout logs, and drops blank lines", () => {
    const decoder = createOutputDecoder();
    for (const line of ["Compiling…", "{oops", "42", '"str"', '{"type":"nope"}', '{"no":"type"}']) {
      expect(decoder.decodeLine(line)).toEqual([{ type: "log", payload: { stream: "stdout", text: line } }]);
    }
    expect(decoder.decodeLine("   ")).toEqual([]);
  });

  it("refuses events only Airlock may record, showing the line as text", () => {
    const decoder = createOutputDecoder();
    const forged = JSON.stringify({ type: "approval_requested", payload: {} });
    expect(decoder.decodeLine(forged)).toEqual([
      { type: "log", payload: { stream: "stdout", text: forged } },
      {
        type: "log",
        payload: { stream: "system", text: "Ignored a approval_requested event from the agent: Airlock records these itself" },
      },
    ]);
  });

  it("explains an invalid agent event", () => {
    const decoder = createOutputDecoder();
    const bad = JSON.stringify({ type: "cost", payload: { inputTokens: -1, outputTokens: 2 } });
    const events = decoder.decodeLine(bad);
    expect(events[0]).toEqual({ type: "log", payload: { stream: "stdout", text: bad } });
    expect(events[1]?.payload).toMatchObject({ stream: "system", text: expect.stringContaining("payload.inputTokens") });
  });

  it("parses a complete last line even without a newline, and marks a cut line", () => {
    const decoder = createOutputDecoder();
    expect(decoder.decodeLine(airlockLine, "partial")).toHaveLength(1);
    expect(decoder.decodeLine(airlockLine, "partial")[0]?.type).toBe("message");
    expect(decoder.decodeLine('{"type":"mess', "partial")[0]).toEqual({
      type: "log",
      payload: { stream: "stdout", text: '{"type":"mess' },
    });
    expect(decoder.decodeLine("x".repeat(10), "oversized", 20_000_000)[0]?.payload).toMatchObject({
      text: "xxxxxxxxxx…[cut: 20.0 MB of a line too long to keep]",
    });
  });

  it("bounds 50,000-deep JSON instead of overflowing the stack", () => {
    const decoder = createOutputDecoder();
    const deepInput = `{"type":"tool_call","payload":{"id":"t1","name":"Bash","startedAt":"2026-01-05T09:00:00Z","input":${"[".repeat(50_000)}1${"]".repeat(50_000)}}}`;
    const [event] = decoder.decodeLine(deepInput);
    expect(event?.type).toBe("tool_call");
    expect(JSON.stringify(event)).toContain("…[cut: nested deeper than 32 levels]");
    const deepClaude = `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"Bash","input":${"{\"a\":".repeat(50_000)}1${"}".repeat(50_000)}}]}}`;
    expect(() => JSON.stringify(decoder.decodeLine(deepClaude))).not.toThrow();
  });

  it("reads only the forced format", () => {
    const airlockOnly = createOutputDecoder({ format: "airlock" });
    expect(airlockOnly.decodeLine(claudeLine)[0]).toMatchObject({ type: "log", payload: { stream: "stdout" } });
    const claudeOnly = createOutputDecoder({ format: "claude-stream-json" });
    expect(claudeOnly.decodeLine(airlockLine)[0]).toMatchObject({ type: "log", payload: { stream: "stdout" } });
    expect(claudeOnly.decodeLine(claudeLine)[0]).toMatchObject({ type: "message" });
    expect(claudeOnly.externalSessionId).toBeUndefined();
  });
});
