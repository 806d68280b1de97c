import { describe, expect, it } from "vitest";
import { diffLines, diffStackSpecs } from "./diff";
import { zStackSpec } from "./spec-schema";

const base = zStackSpec.parse({
  modelProvider: "anthropic",
  model: "claude-sonnet-4-5",
  adapter: { kind: "command", command: ["claude", "-p"], env: ["ANTHROPIC_API_KEY"] },
  tools: ["Read", "Grep"],
  mcpServers: [{ name: "sentry", transport: "http", target: "https://mcp.sentry.dev/mcp", secrets: ["sentry-token"] }],
  skills: ["ci-log-reading"],
  subagents: [{ name: "diagnoser", role: "Finds the cause.", tools: ["Read"] }],
  promptTemplate: "line one\nline two\nline three",
});

describe("diffStackSpecs", () => {
  it("finds nothing between equal specs", () => {
    expect(diffStackSpecs(base, structuredClone(base))).toEqual({ changes: [], promptTemplate: null, changed: false });
  });

  it("reports scalars, set items, named entries and the argv as people read them", () => {
    const after = zStackSpec.parse({
      ...base,
      model: "claude-opus-4",
      adapter: { kind: "command", command: ["claude", "-p", "--verbose"], env: [] },
      tools: ["Grep", "Edit"],
      mcpServers: [{ ...base.mcpServers[0]!, target: "https://sentry.example/mcp", secrets: [] }, { name: "ci", transport: "stdio", target: "npx ci-mcp" }],
      subagents: [],
      limits: { ...base.limits, maxCostUsd: 9 },
    });
    expect(diffStackSpecs(base, after).changes).toEqual([
      { path: "model", kind: "changed", before: "claude-sonnet-4-5", after: "claude-opus-4" },
      { path: "adapter.command", kind: "changed", before: "claude -p", after: "claude -p --verbose" },
      { path: "adapter.env", kind: "removed", before: "ANTHROPIC_API_KEY", after: null },
      { path: "tools", kind: "removed", before: "Read", after: null },
      { path: "tools", kind: "added", before: null, after: "Edit" },
      { path: "mcpServers.sentry.target", kind: "changed", before: "https://mcp.sentry.dev/mcp", after: "https://sentry.example/mcp" },
      { path: "mcpServers.sentry.secrets", kind: "removed", before: "sentry-token", after: null },
      { path: "mcpServers.ci", kind: "added", before: null, after: "stdio npx ci-mcp" },
      { path: "subagents.diagnoser", kind: "removed", before: "Finds the cause. (tools: Read)", after: null },
      { path: "limits.maxCostUsd", kind: "changed", before: "5", after: "9" },
    ]);
  });

  it("shows a changed adapter kind as the whole adapter, and the template line by line", () => {
    const after = { ...base, adapter: { kind: "scripted" as const, scenario: "sum-off-by-one" }, promptTemplate: "line one\nline 2\nline three\nline four" };
    const diff = diffStackSpecs(base, after);
    expect(diff.changes.map((c) => c.path)).toEqual(["adapter.kind", "adapter", "promptTemplate"]);
    expect(diff.promptTemplate).toEqual([
      { op: "same", text: "line one" },
      { op: "removed", text: "line two" },
      { op: "added", text: "line 2" },
      { op: "same", text: "line three" },
      { op: "added", text: "line four" },
    ]);
  });
});

describe("diffLines", () => {
  it("keeps the longest common run of lines", () => {
    expect(diffLines("a\nb\nc", "b\nc\nd").map((l) => `${l.op[0]}${l.text}`)).toEqual(["ra", "sb", "sc", "ad"]);
  });
});
