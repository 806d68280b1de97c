import type { Prisma } from "@/server/db";
import { digestOf } from "@/server/lib/digest";
import type { LaunchRecord, PrivilegedCapability } from "./schemas";
import type { AdmissionDecision } from "../pools/admission";
import type { StackSpec } from "../stacks/spec";

// What an admitted attempt launches with, resolved, and which of it is privileged. Pure.
// A privileged secret, a privileged MCP server or open network makes the attempt wait for a
// person (approvals/privileged-capability.ts); the approval is bound to launchDigest(record),
// and the attempt launches only while the record it would launch with has that same digest.

export type LaunchRun = {
  prompt: string;
  promptHash: string;
  contextDigest: string;
  stackDigest: string;
  stackSnapshot: Prisma.JsonValue;
};

/** The privileged capabilities an admitted attempt would get (empty: it launches without a person). */
export function privilegedCapabilities(decision: AdmissionDecision, spec: StackSpec): PrivilegedCapability[] {
  if (!decision.admitted) return [];
  const out: PrivilegedCapability[] = [];
  for (const s of decision.secretsGranted) {
    if (s.privileged) out.push({ kind: "secret", name: s.name, why: "its grant marks the secret privileged" });
  }
  for (const m of spec.mcpServers) {
    if (m.privileged) out.push({ kind: "mcp_server", name: m.name, why: `the stack marks MCP server ${m.name} (${m.transport} ${m.target}) privileged` });
  }
  // A scripted demo agent starts no process, so its network grants nothing.
  if (decision.sandbox?.network.mode === "open" && decision.sandbox.kind !== "no_process") {
    out.push({ kind: "network", name: "open", why: `pool ${decision.pool?.name ?? "?"} lets the agent reach any host but this machine` });
  }
  return out;
}

/** The record a person approves: byte for byte what will launch (secret and config map names, never values). */
export function launchRecord(opts: { run: LaunchRun; name: string | null; version: number | null; spec: StackSpec; decision: AdmissionDecision; contextLabels: string[] }): LaunchRecord | null {
  const { run, spec, decision } = opts;
  if (!decision.admitted || !decision.pool || !decision.runtimeServiceAccount || !decision.runnerServiceAccount) return null;
  return {
    prompt: run.prompt,
    promptHash: run.promptHash,
    contextDigest: run.contextDigest,
    contextLabels: opts.contextLabels,
    stack: {
      name: opts.name,
      version: opts.version,
      digest: run.stackDigest,
      model: `${spec.modelProvider}/${spec.model}`,
      adapter: spec.adapter.kind,
      tools: spec.tools,
      mcpServers: spec.mcpServers.map((m) => ({ name: m.name, transport: m.transport, target: m.target, secrets: m.secrets, configMaps: m.configMaps, privileged: m.privileged, required: m.required })),
      skills: spec.skills,
      subagents: spec.subagents.map((s) => ({ name: s.name, role: s.role, tools: s.tools })),
    },
    pool: { name: decision.pool.name, trustTier: decision.pool.trustTier, kind: decision.pool.kind },
    runtimeServiceAccount: decision.runtimeServiceAccount,
    runnerServiceAccount: decision.runnerServiceAccount,
    secrets: decision.secretsGranted.map((s) => ({ name: s.name, privileged: s.privileged })),
    configMaps: decision.configMapsGranted.map((c) => c.name),
    network: { mode: decision.sandbox?.network.mode ?? "none", hosts: decision.sandbox?.network.allowedHosts ?? [] },
    privileged: privilegedCapabilities(decision, spec),
  };
}

/** The digest a privileged_capability approval is bound to. */
export const launchDigest = (record: LaunchRecord) => digestOf(record);

/** What changed between two records, in words (for a stale approval's reason). */
export function launchChanges(before: LaunchRecord, after: LaunchRecord): string[] {
  const keys = Object.keys(before) as (keyof LaunchRecord)[];
  return keys.filter((k) => digestOf(before[k]) !== digestOf(after[k])).map((k) => (k === "stack" ? "the stack" : k === "privileged" ? "the privileged capabilities" : `the ${k.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`));
}
