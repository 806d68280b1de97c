import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createClaudeCodeAdapter } from "@/server/execution/agents/claude-code/claude-code-adapter";
import { createCommandAdapter } from "@/server/execution/agents/command-adapter";
import { createScriptedAdapter } from "@/server/execution/agents/scripted-adapter";
import { type AgentAdapter, type AgentSandbox, AgentStartError } from "@/server/execution/agents/types";
import { defaultSandboxLimits, zAllowedHost } from "@/server/execution/sandbox/policy";
import { hostView } from "@/server/execution/sandbox/system";
import type { KnownSecret } from "@/server/domain/context/redaction/redact";
import type { AdmissionDecision } from "@/server/domain/pools/admission";
import type { Grants } from "@/server/execution/agents/claude-code/launch-plan";
import type { ClaimResult } from "@/server/domain/run-engine/claim-attempt";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { envVarName, grantedValue } from "@/server/env";
import type { RunnerSettings } from "./settings";

// Which adapter runs an attempt, and the environment it gets. Only granted secrets and config
// maps reach the agent, by value from the server environment (AIRLOCK_SECRET_<NAME>), under
// their plain names; the values are also handed to the transcript redactor.

export function grantedEnvironment(admission: AdmissionDecision) {
  const env: Record<string, string> = {};
  const missing: string[] = [];
  const knownSecrets: KnownSecret[] = [];
  for (const s of admission.secretsGranted) {
    const value = grantedValue("secret", s.name);
    if (value === undefined) missing.push(`secret ${s.name} (AIRLOCK_SECRET_${envVarName(s.name)})`);
    else {
      env[envVarName(s.name)] = value;
      knownSecrets.push({ name: s.name, value });
    }
  }
  for (const c of admission.configMapsGranted) {
    const value = grantedValue("config", c.name);
    if (value === undefined) missing.push(`config map ${c.name} (AIRLOCK_CONFIG_${envVarName(c.name)})`);
    else env[envVarName(c.name)] = value;
  }
  return { env, missing, knownSecrets };
}

/**
 * The sandbox an attempt's process runs in, from its admission: the pool's network mode and
 * limits, the allowed hosts (the pool's, the stack's model API, and the host of any granted
 * `*_BASE_URL` config value, a gateway the stack points its agent at, unless the model is reached
 * through Airlock's model gateway outside the sandbox, as a Claude Code stack's is), and what of the host it
 * sees: the project read-only without the data folder or .env files, the repository's git
 * objects read-only and its worktree's own git folder writable. An admission from before
 * sandboxes were recorded gets the defaults (restricted, no hosts): never less contained.
 */
export function sandboxFor(opts: {
  admission: AdmissionDecision;
  env: Record<string, string>;
  dataDir: string;
  workspace: { dir: string; sourceRepo: string } | null;
  projectRoot?: string;
  /** The adapter calls its model through Airlock's gateway: the agent need not reach the model's host. */
  modelGateway?: boolean;
}): AgentSandbox {
  const decided = opts.admission.sandbox ?? { kind: "bubblewrap" as const, reason: null, network: { mode: "restricted" as const, allowedHosts: [] }, limits: defaultSandboxLimits };
  if (decided.kind === "unsandboxed" || decided.kind === "no_process") return { kind: "none", reason: decided.reason ?? "no sandbox" };
  if (decided.kind === "kubernetes") return { kind: "none", reason: "runs as a Kubernetes Job (its pod is the sandbox)" };
  const gateways = Object.entries(opts.env).flatMap(([name, value]) => {
    if (!/_BASE_URL$/.test(name) || (opts.modelGateway && name === "ANTHROPIC_BASE_URL")) return [];
    try {
      const url = new URL(value);
      const host = zAllowedHost.safeParse(`${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`);
      return host.success ? [host.data] : [];
    } catch {
      return [];
    }
  });
  const view = hostView({ projectRoot: opts.projectRoot ?? process.cwd(), dataDir: opts.dataDir });
  const gitDir = opts.workspace ? worktreeGitDir(opts.workspace.dir) : null;
  return {
    kind: "bubblewrap",
    network: { mode: decided.network.mode, allowedHosts: decided.network.mode === "none" ? [] : [...new Set([...decided.network.allowedHosts, ...gateways])] },
    limits: decided.limits,
    readOnlyPaths: [...view.readOnlyPaths, ...(opts.workspace ? [opts.workspace.sourceRepo] : [])],
    writablePaths: gitDir ? [gitDir] : [],
    hiddenPaths: view.hiddenPaths,
    stateDir: join(opts.dataDir, "sandboxes"),
  };
}

/** A worktree's own git folder ("gitdir: <repo>/worktrees/<name>" in its .git file). */
function worktreeGitDir(dir: string): string | null {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(join(dir, ".git"), "utf8"));
    return m ? resolve(dir, m[1]!.trim()) : null;
  } catch {
    return null;
  }
}

/** The secrets and config maps admission granted, by name (what an MCP server's entry may reference). */
export const grantsOf = (admission: AdmissionDecision): Grants => ({
  secrets: new Set(admission.secretsGranted.map((s) => s.name)),
  configMaps: new Set(admission.configMapsGranted.map((c) => c.name)),
});

/** `leaveOut`: optional MCP servers that failed their health check (left out of --mcp-config). */
export function buildAdapter(opts: { spec: StackSpec; claim: Extract<ClaimResult, { kind: "started" }>; settings: RunnerSettings; leaveOut?: ReadonlyMap<string, string> }): AgentAdapter {
  const { spec, claim, settings } = opts;
  if (claim.pool.kind === "kubernetes") {
    if (!settings.kube) {
      throw new AgentStartError(`pool ${claim.pool.name} runs on Kubernetes and no cluster is configured (set AIRLOCK_K8S_CONFIG)`);
    }
    return settings.kube.adapterFor(claim, spec);
  }
  if (spec.adapter.kind === "scripted") return createScriptedAdapter({ scenario: spec.adapter.scenario, speed: settings.scriptedSpeed });
  if (spec.adapter.kind === "claude-code") {
    return createClaudeCodeAdapter({
      spec,
      adapter: spec.adapter,
      grants: grantsOf(claim.admission),
      leaveOut: opts.leaveOut,
      sessions: { store: join(settings.dataDir, "agent-sessions"), runId: claim.run.id },
    });
  }
  return createCommandAdapter({ argv: spec.adapter.command, outputFormat: spec.adapter.outputFormat });
}
