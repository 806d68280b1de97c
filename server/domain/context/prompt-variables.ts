// The prompt template variables: a fixed, documented catalogue (not arbitrary bundle paths), so
// a template can be checked when its stack is saved and a typo is an error, not a blank. Free of
// server-only imports: the stack editor can check templates in the browser.
import { canonicalJson } from "@/server/lib/canonical-json";
import type { ContextBundle } from "./context-bundle";

export type Render = (bundle: ContextBundle, digest: string) => string | number | boolean | null | readonly string[];

type Variable = { description: string; render: Render };

export const NONE = "(none)";

const list = (items: readonly string[]) => (items.length === 0 ? NONE : items.map((i) => `- ${i}`).join("\n"));

/**
 * The variables a template may use. Scalars render as text, lists as "- item" lines, and absent
 * values (no pull request, no job...) as "(none)".
 */
export const PROMPT_VARIABLES = {
  "task.kind": { description: "diagnose, repair, triage or release_review", render: (b) => b.task.kind },
  "task.outputFormat": { description: "what the agent must hand back", render: (b) => b.task.outputFormat },
  "repository.fullName": { description: "owner/name", render: (b) => b.repository.fullName },
  "repository.defaultBranch": { description: "the default branch", render: (b) => b.repository.defaultBranch },
  "repository.cloneUrl": { description: "clone URL", render: (b) => b.repository.cloneUrl },
  "repository.visibility": { description: "public, private or internal", render: (b) => b.repository.visibility },
  "repository.trustTier": { description: "trusted or untrusted", render: (b) => b.repository.trustTier },
  "ref.branch": { description: "the branch that was built", render: (b) => b.ref.branch },
  "ref.commitSha": { description: "the commit the run is about", render: (b) => b.ref.commitSha },
  "ref.baseRef": { description: "the pull request's base branch", render: (b) => b.ref.baseRef },
  "ref.baseSha": { description: "the base commit", render: (b) => b.ref.baseSha },
  "ref.isFork": {
    description: "yes, no or unknown",
    render: (b) => (b.ref.isFork === null ? "unknown" : b.ref.isFork ? "yes" : "no"),
  },
  "source.kind": { description: "what started the run (failed_check, pr_comment...)", render: (b) => b.source.kind },
  "source.command": { description: "the PR comment command and its arguments", render: (b) => b.source.command },
  "source.label": { description: "the label that dispatched the run", render: (b) => b.source.label },
  "actor.login": { description: "who or what started the run", render: (b) => b.actor.login },
  "actor.permission": { description: "the permission decision, as a sentence", render: (b) => b.actor.permission.reason },
  "pullRequest.number": { description: "PR number", render: (b) => b.pullRequest?.number ?? null },
  "pullRequest.title": { description: "PR title", render: (b) => b.pullRequest?.title ?? null },
  "pullRequest.body": { description: "PR description (redacted)", render: (b) => b.pullRequest?.body || null },
  "pullRequest.url": { description: "PR URL", render: (b) => b.pullRequest?.url ?? null },
  "pullRequest.author": { description: "PR author", render: (b) => b.pullRequest?.author ?? null },
  "pullRequest.labels": { description: "PR labels, one per line", render: (b) => b.pullRequest?.labels ?? null },
  "pullRequest.changedFiles": {
    description: "changed files, one per line",
    render: (b) => b.pullRequest?.changedFiles ?? null,
  },
  "pullRequest.discussion": {
    description: "comments and reviews, one block each",
    render: (b) =>
      b.pullRequest && b.pullRequest.discussion.length > 0
        ? b.pullRequest.discussion.map((d) => `${d.author} (${d.kind}):\n${d.body}`).join("\n\n")
        : null,
  },
  "pipeline.workflowName": { description: "workflow name", render: (b) => b.pipeline?.workflowName ?? null },
  "pipeline.checkName": { description: "check name", render: (b) => b.pipeline?.checkName ?? null },
  "pipeline.runId": { description: "external run id", render: (b) => b.pipeline?.runId ?? null },
  "pipeline.url": { description: "link to the run", render: (b) => b.pipeline?.url ?? null },
  "pipeline.conclusion": { description: "the run's conclusion", render: (b) => b.pipeline?.conclusion ?? null },
  "job.name": { description: "the failed job", render: (b) => b.job?.name ?? null },
  "job.step": { description: "the failed step", render: (b) => b.job?.step ?? null },
  "job.exitCode": { description: "exit code", render: (b) => b.job?.exitCode ?? null },
  "job.image": { description: "runner image", render: (b) => b.job?.image ?? null },
  "job.runnerPool": { description: "the CI runner pool", render: (b) => b.job?.runnerPool ?? null },
  "logs.excerpt": {
    description: "every log excerpt, fenced, with its line range",
    render: (b) =>
      b.logs.length === 0
        ? null
        : b.logs
            .map(
              (l) =>
                `${l.name} (lines ${l.startLine}-${l.endLine} of ${l.totalLines}${l.redaction.status === "redacted" ? ", redacted" : ""}):\n\`\`\`text\n${l.excerpt}\n\`\`\``,
            )
            .join("\n\n"),
  },
  "failure.signature": { description: "failure signature", render: (b) => b.failure?.signature ?? null },
  "failure.testNames": { description: "failing tests, one per line", render: (b) => b.failure?.testNames ?? null },
  "failure.errorLines": { description: "first error lines, one per line", render: (b) => b.failure?.errorLines ?? null },
  "failure.stackTrace": { description: "first stack trace", render: (b) => b.failure?.stackTrace ?? null },
  "failure.filePaths": { description: "files named by the failure", render: (b) => b.failure?.filePaths ?? null },
  "failure.similarRuns": {
    description: "earlier runs with the same signature",
    render: (b) =>
      b.failure?.similarRuns.map((r) => `${r.runId} at ${r.headSha.slice(0, 12)}${r.outcome ? `: ${r.outcome}` : ""}`) ??
      null,
  },
  artifacts: {
    description: "artifacts with type, digest and URL, one per line",
    render: (b) => b.artifacts.map((a) => `${a.name} (${a.type})${a.digest ? ` ${a.digest}` : ""}${a.url ? ` ${a.url}` : ""}`),
  },
  "stack.name": { description: "agent stack name", render: (b) => b.stack.name },
  "stack.version": { description: "agent stack version", render: (b) => b.stack.version },
  "stack.tools": { description: "tools, one per line", render: (b) => b.stack.tools },
  "stack.skills": { description: "skills, one per line", render: (b) => b.stack.skills },
  "stack.subagents": { description: "subagents, one per line", render: (b) => b.stack.subagents },
  "stack.mcpServers": { description: "MCP servers, one per line", render: (b) => b.stack.mcpServers.map((s) => s.name) },
  "policy.summary": {
    description: "what the run may do: write-back mode, approval, network, secrets, allowed tools",
    render: (b) =>
      [
        `write-back: ${b.policy.writeBackMode}`,
        `approval: ${b.policy.approvalMode}`,
        `bot comments: ${b.policy.botCommentsAllowed ? "allowed" : "not allowed"}`,
        `network: ${b.policy.network}${b.policy.networkAllowlist.length > 0 ? ` (${b.policy.networkAllowlist.join(", ")})` : ""}`,
        `secrets: ${b.policy.secrets}`,
        `allowed tools: ${b.policy.allowedTools.length > 0 ? b.policy.allowedTools.join(", ") : NONE}`,
      ].join("\n"),
  },
  contextLabels: {
    description: "the selected prompt fragments, in order",
    render: (b) => (b.contextLabels.length === 0 ? null : b.contextLabels.map((l) => l.fragment).join("\n\n")),
  },
  attribution: {
    description: "red checks on the branch, whose they are (ours, pre-existing, unknown) and what to do about each",
    render: (b) => (b.attribution && b.attribution.length > 0 ? attributionLines(b.attribution) : null),
  },
  // Short names stack templates already use; each is the same value as its long form.
  "repository.name": { description: "owner/name (same as repository.fullName)", render: (b) => b.repository.fullName },
  "ref.sha": { description: "the commit the run is about (same as ref.commitSha)", render: (b) => b.ref.commitSha },
  "ref.tag": { description: "release runs: the tag being released", render: (b) => b.ref.tag },
  "failure.tests": { description: "failing tests, one per line (same as failure.testNames)", render: (b) => b.failure?.testNames ?? null },
  "artifacts.list": {
    description: "artifacts, one per line (same as artifacts)",
    render: (b) => b.artifacts.map((a) => `${a.name} (${a.type})${a.digest ? ` ${a.digest}` : ""}${a.url ? ` ${a.url}` : ""}`),
  },
  "bundle.digest": { description: "sha256 of the canonical context bundle", render: (_b, digest) => digest },
  "bundle.json": { description: "the whole context bundle as canonical JSON", render: (b) => canonicalJson(b) },
} satisfies Record<string, Variable>;

/** One line per red check: its attribution and the guidance that goes with it. */
export function attributionLines(entries: readonly { check: string; attribution: string; guidance: string }[]): string {
  return entries.map((a) => `- ${a.check}: ${a.attribution.replace("_", "-")}. ${a.guidance}`).join("\n");
}

export const ATTRIBUTION_HEADING = "## Red checks on this branch (attribution)";
export const INSTRUCTIONS_HEADING = "## Instructions from the person who dispatched this run";

export type PromptVariable = keyof typeof PROMPT_VARIABLES;
export const PROMPT_VARIABLE_NAMES = Object.keys(PROMPT_VARIABLES).sort() as PromptVariable[];

// `${{ ... }}` is GitHub Actions syntax that prompts quote often: it is text, not a placeholder.
export const PLACEHOLDER = /(\$?)\{\{([^{}]{0,200})\}\}/g;
const NAME = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*$/;

export type TemplateCheck = { variables: PromptVariable[]; unknown: string[]; malformed: string[] };

/** The variables a template uses, and what is wrong with it; for validating a stack on save. */
export function checkPromptTemplate(template: string): TemplateCheck {
  const variables = new Set<PromptVariable>();
  const unknown = new Set<string>();
  const malformed: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m[1] === "$") continue;
    const name = (m[2] ?? "").trim();
    if (!NAME.test(name)) malformed.push(m[0]);
    else if (Object.hasOwn(PROMPT_VARIABLES, name)) variables.add(name as PromptVariable);
    else unknown.add(name);
  }
  // An opening "{{" that never closes is a typo too.
  const stripped = template.replace(PLACEHOLDER, "");
  for (const m of stripped.matchAll(/(\$?)\{\{/g)) if (m[1] !== "$") malformed.push(stripped.slice(m.index, m.index + 20));
  return { variables: [...variables].sort(), unknown: [...unknown].sort(), malformed };
}

/** A rendered value as prompt text: lists as "- item" lines, absent values as "(none)". */
export function toText(value: ReturnType<Render>): string {
  if (value === null || value === "") return NONE;
  if (Array.isArray(value)) return list(value as readonly string[]);
  return String(value);
}
