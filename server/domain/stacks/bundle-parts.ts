// Bundle parts derived from Airlock's own records: the stack snapshot a run uses and the policy
// it runs under. Pure, so trigger evaluation and the UI's "what will the agent get" agree.
import type { WriteBackKind } from "@/server/domain/ci-events/enums";
import type { BundlePolicy, BundleStack } from "@/server/domain/context/context-bundle";
import type { StackSpec } from "./spec";

export type SnapshotStack = { id: string; name: string; version: number; digest: string; spec: StackSpec };

const WRITING_TOOLS = /^(?:Edit|Write|MultiEdit|NotebookEdit)\b/;

export function bundleStack(stack: SnapshotStack): BundleStack {
  const { spec } = stack;
  return {
    id: stack.id,
    name: stack.name,
    version: stack.version,
    digest: stack.digest,
    model: { provider: spec.modelProvider, name: spec.model },
    adapter: spec.adapter.kind,
    // Writes stay in the workspace either way; leaving it always takes an approval.
    toolProfile: spec.tools.some((t) => WRITING_TOOLS.test(t)) ? "workspace-write" : "read-only",
    tools: spec.tools,
    mcpServers: spec.mcpServers.map((m) => ({ name: m.name, privileged: m.privileged })),
    skills: spec.skills,
    subagents: spec.subagents.map((s) => s.name),
    approvalMode: spec.approvalMode,
  };
}

/**
 * What the run may do, before admission picks a pool. Untrusted refs (forks, unknown) get no
 * secrets; every write-back needs approval unless the stack allows the repository's exceptions.
 */
export function bundlePolicy(opts: {
  repository: { botCommentsAllowed: boolean; writeBackExceptions: readonly WriteBackKind[] };
  spec: StackSpec;
  untrusted: boolean;
}): BundlePolicy {
  const exceptions = opts.spec.approvalMode === "exceptions_allowed" ? [...opts.repository.writeBackExceptions] : [];
  return {
    allowedTools: opts.spec.tools,
    writeBackMode: exceptions.length > 0 ? "exceptions_allowed" : "approval_required",
    approvalMode: opts.spec.approvalMode,
    writeBackExceptions: exceptions,
    botCommentsAllowed: opts.repository.botCommentsAllowed,
    network: "restricted",
    networkAllowlist: [],
    secrets: opts.untrusted ? "none" : "granted",
  };
}
