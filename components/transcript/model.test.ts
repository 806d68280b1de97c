import { describe, expect, it } from "vitest";
import { buildRows, toolDuration, type EventRow } from "./model";
import { eventSearchText, splitHighlights, stepMatch } from "./search";
import { TranscriptStore, type TEvent } from "./store";

let clock = Date.parse("2026-11-29T10:00:00Z");
const ev = (seq: number, type: string, payload: Record<string, unknown> = {}): TEvent => ({ seq, type, payload, attemptId: null, at: (clock += 100) });

function storeOf(events: TEvent[]) {
  const s = new TranscriptStore();
  s.add(events);
  return s;
}

const rowsOf = (s: TranscriptStore, collapsed?: Set<string>) =>
  buildRows(s.segmentList, { collapsed, startReached: s.startReached, knownLastSeq: s.knownLastSeq });

describe("TranscriptStore", () => {
  it("keeps contiguous segments, ignores duplicates and appends live events in place", () => {
    const s = new TranscriptStore();
    expect(s.add([ev(5, "log"), ev(6, "log")])).toBe(2);
    expect(s.add([ev(6, "log"), ev(7, "log")])).toBe(1);
    expect(s.add([ev(1, "log"), ev(2, "log")])).toBe(2);
    expect(s.segmentList.map((seg) => seg.map((e) => e.seq))).toEqual([[1, 2], [5, 6, 7]]);
    expect(s.startReached).toBe(true);
    expect(s.add([ev(3, "log"), ev(4, "log")])).toBe(2);
    expect(s.segmentList).toHaveLength(1);
    expect(s.has(4)).toBe(true);
    expect(s.has(8)).toBe(false);
  });

  it("bumps its version once per change, for useSyncExternalStore", () => {
    const s = new TranscriptStore();
    let calls = 0;
    s.subscribe(() => calls++);
    s.add([ev(1, "log")]);
    s.add([ev(1, "log")]);
    expect(calls).toBe(1);
    expect(s.getVersion()).toBe(1);
  });
});

describe("buildRows", () => {
  it("pairs a tool result with its call by id, with the duration", () => {
    const call = ev(1, "tool_call", { id: "t1", name: "bash", input: {}, startedAt: "x" });
    const other = ev(2, "tool_call", { id: "t2", name: "read", input: {}, startedAt: "x" });
    const result = ev(3, "tool_result", { toolCallId: "t1", output: "ok", isError: false, durationMs: 1234 });
    const { rows, indexOfSeq } = rowsOf(storeOf([call, other, result]));
    expect(rows.map((r) => r.key)).toEqual(["e1", "e2"]);
    expect((rows[0] as EventRow).result?.seq).toBe(3);
    expect((rows[1] as EventRow).result).toBeUndefined();
    expect(indexOfSeq.get(3)).toBe(0);
    expect(toolDuration(call, result)).toBe(1234);
  });

  it("shows a result standalone when its call is not loaded", () => {
    const { rows } = rowsOf(storeOf([ev(9, "tool_result", { toolCallId: "older", output: "x", isError: true })]));
    expect(rows.map((r) => r.key)).toEqual(["gap-1-8", "e9"]);
  });

  it("nests subagents as a tree, merges completions, and hides a collapsed subtree", () => {
    const events = [
      ev(1, "subagent_started", { id: "a", name: "planner", parentId: null }),
      ev(2, "message", { role: "assistant", text: "in a", subagentId: "a" }),
      ev(3, "subagent_started", { id: "b", name: "tester", parentId: "a" }),
      ev(4, "log", { stream: "stdout", text: "in b", subagentId: "b" }),
      ev(5, "subagent_completed", { id: "b", name: "tester", parentId: "a", isError: false }),
      ev(6, "subagent_completed", { id: "a", name: "planner", parentId: null, isError: false }),
      ev(7, "message", { role: "assistant", text: "top" }),
    ];
    const s = storeOf(events);
    const open = rowsOf(s);
    expect(open.rows.map((r) => [r.key, (r as EventRow).depth])).toEqual([
      ["e1", 0],
      ["e2", 1],
      ["e3", 1],
      ["e4", 2],
      ["e7", 0],
    ]);
    expect((open.rows[0] as EventRow).completion?.seq).toBe(6);
    expect((open.rows[0] as EventRow).childCount).toBe(3);
    const closed = rowsOf(s, new Set(["a"]));
    expect(closed.rows.map((r) => r.key)).toEqual(["e1", "e7"]);
    expect(closed.ancestorsOfSeq.get(4)).toEqual(["a", "b"]);
    expect(closed.indexOfSeq.has(4)).toBe(false);
  });

  it("survives a subagent that claims itself as parent", () => {
    const { rows } = rowsOf(storeOf([ev(1, "subagent_started", { id: "x", name: "loop", parentId: "x" }), ev(2, "log", { text: "t", subagentId: "x" })]));
    expect(rows).toHaveLength(2);
  });

  it("marks missing ranges as gaps: before the window, between windows, and up to the newest known", () => {
    const s = storeOf([ev(10, "log"), ev(11, "log"), ev(20, "log")]);
    s.noteKnownLast(25);
    expect(rowsOf(s).rows.filter((r) => r.kind === "gap").map((r) => r.key)).toEqual(["gap-1-9", "gap-12-19", "gap-21-25"]);
  });
});

describe("search", () => {
  it("searches the type and string values, never keys", () => {
    const text = eventSearchText({ type: "tool_call", payload: { name: "bash", input: { command: "npm test" }, n: 5 } });
    expect(text).toContain("npm test");
    expect(text).not.toContain("command");
  });

  it("splits text around case-insensitive matches", () => {
    expect(splitHighlights("Error: an ERROR", "error")).toEqual([
      { text: "Error", match: true },
      { text: ": an ", match: false },
      { text: "ERROR", match: true },
    ]);
    expect(splitHighlights("abc", "")).toEqual([{ text: "abc", match: false }]);
  });

  it("steps through matches in both directions, wrapping", () => {
    expect(stepMatch([3, 8, 20], null, 1)).toBe(3);
    expect(stepMatch([3, 8, 20], 8, 1)).toBe(20);
    expect(stepMatch([3, 8, 20], 20, 1)).toBe(3);
    expect(stepMatch([3, 8, 20], 3, -1)).toBe(20);
    expect(stepMatch([], 3, 1)).toBeNull();
  });
});
