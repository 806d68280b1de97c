import type { StackSpec } from "./spec";

// A structural diff of two stack specs, as people review it: scalar fields before and after, sets
// (tools, skills, env names, secrets) as items added and removed, MCP servers and subagents
// matched by name (a rename reads as one removed and one added), the argv as one line, and the
// prompt template as a line diff. Pure and browser-safe.

export type SpecChange = {
  /** Where, e.g. "model", "tools", "mcpServers.sentry.target", "limits.maxCostUsd". */
  path: string;
  kind: "added" | "removed" | "changed";
  before: string | null;
  after: string | null;
};

export type LineDiff = { op: "same" | "added" | "removed"; text: string }[];

export type StackSpecDiff = {
  changes: SpecChange[];
  /** The prompt template line by line, when it changed. */
  promptTemplate: LineDiff | null;
  changed: boolean;
};

const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

function scalar(out: SpecChange[], path: string, before: unknown, after: unknown) {
  if (show(before) !== show(after)) out.push({ path, kind: "changed", before: show(before), after: show(after) });
}

function set(out: SpecChange[], path: string, before: readonly string[], after: readonly string[]) {
  for (const item of before) if (!after.includes(item)) out.push({ path, kind: "removed", before: item, after: null });
  for (const item of after) if (!before.includes(item)) out.push({ path, kind: "added", before: null, after: item });
}

function byName<T extends { name: string }>(
  out: SpecChange[],
  path: string,
  before: readonly T[],
  after: readonly T[],
  summary: (item: T) => string,
  fields: (prefix: string, b: T, a: T) => void,
) {
  for (const b of before) {
    const a = after.find((x) => x.name === b.name);
    if (!a) out.push({ path: `${path}.${b.name}`, kind: "removed", before: summary(b), after: null });
    else fields(`${path}.${b.name}`, b, a);
  }
  for (const a of after) {
    if (!before.some((x) => x.name === a.name)) out.push({ path: `${path}.${a.name}`, kind: "added", before: null, after: summary(a) });
  }
}

const argv = (command: readonly string[]) => command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(" ");

function adapterChanges(out: SpecChange[], before: StackSpec["adapter"], after: StackSpec["adapter"]) {
  if (before.kind !== after.kind) {
    scalar(out, "adapter.kind", before.kind, after.kind);
    const describe = (a: StackSpec["adapter"]) =>
      a.kind === "command" ? argv(a.command) : a.kind === "claude-code" ? `claude-code (key ${a.apiKeySecret}, ${a.maxTurns} turns)` : `scenario ${a.scenario}`;
    scalar(out, "adapter", describe(before), describe(after));
    return;
  }
  if (before.kind === "command" && after.kind === "command") {
    scalar(out, "adapter.command", argv(before.command), argv(after.command));
    set(out, "adapter.env", before.env, after.env);
    scalar(out, "adapter.outputFormat", before.outputFormat, after.outputFormat);
  }
  if (before.kind === "claude-code" && after.kind === "claude-code") {
    scalar(out, "adapter.apiKeySecret", before.apiKeySecret, after.apiKeySecret);
    scalar(out, "adapter.baseUrlConfigMap", before.baseUrlConfigMap ?? "(none)", after.baseUrlConfigMap ?? "(none)");
    scalar(out, "adapter.maxTurns", String(before.maxTurns), String(after.maxTurns));
  }
  if (before.kind === "scripted" && after.kind === "scripted") scalar(out, "adapter.scenario", before.scenario, after.scenario);
}

/** Line diff by longest common subsequence (templates are at most 20,000 characters). */
export function diffLines(before: string, after: string): LineDiff {
  const a = before.split("\n");
  const b = after.split("\n");
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i]!;
    const next = lcs[i + 1]!;
    for (let j = m - 1; j >= 0; j--) row[j] = a[i] === b[j] ? next[j + 1]! + 1 : Math.max(next[j]!, row[j + 1]!);
  }
  const out: LineDiff = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: "same", text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: "removed", text: a[i++]! });
    else out.push({ op: "added", text: b[j++]! });
  }
  while (i < n) out.push({ op: "removed", text: a[i++]! });
  while (j < m) out.push({ op: "added", text: b[j++]! });
  return out;
}

export function diffStackSpecs(before: StackSpec, after: StackSpec): StackSpecDiff {
  const out: SpecChange[] = [];
  scalar(out, "modelProvider", before.modelProvider, after.modelProvider);
  scalar(out, "model", before.model, after.model);
  adapterChanges(out, before.adapter, after.adapter);
  set(out, "tools", before.tools, after.tools);
  byName(
    out,
    "mcpServers",
    before.mcpServers,
    after.mcpServers,
    (s) => `${s.transport} ${s.target}${s.privileged ? " (privileged)" : ""}${s.required ? "" : " (optional)"}`,
    (prefix, b, a) => {
      scalar(out, `${prefix}.transport`, b.transport, a.transport);
      scalar(out, `${prefix}.target`, b.target, a.target);
      scalar(out, `${prefix}.privileged`, b.privileged, a.privileged);
      scalar(out, `${prefix}.required`, b.required, a.required);
      set(out, `${prefix}.secrets`, b.secrets, a.secrets);
      set(out, `${prefix}.configMaps`, b.configMaps, a.configMaps);
    },
  );
  set(out, "skills", before.skills, after.skills);
  byName(
    out,
    "subagents",
    before.subagents,
    after.subagents,
    (s) => `${s.role} (tools: ${s.tools.join(", ") || "none"})`,
    (prefix, b, a) => {
      scalar(out, `${prefix}.role`, b.role, a.role);
      set(out, `${prefix}.tools`, b.tools, a.tools);
    },
  );
  scalar(out, "approvalMode", before.approvalMode, after.approvalMode);
  const templateChanged = before.promptTemplate !== after.promptTemplate;
  if (templateChanged) out.push({ path: "promptTemplate", kind: "changed", before: null, after: null });
  scalar(out, "limits.wallClockMinutes", before.limits.wallClockMinutes, after.limits.wallClockMinutes);
  scalar(out, "limits.maxCostUsd", before.limits.maxCostUsd, after.limits.maxCostUsd);
  scalar(out, "limits.maxRetries", before.limits.maxRetries, after.limits.maxRetries);
  return {
    changes: out,
    promptTemplate: templateChanged ? diffLines(before.promptTemplate, after.promptTemplate) : null,
    changed: out.length > 0,
  };
}
