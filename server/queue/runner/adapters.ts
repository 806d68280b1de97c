import { createCommandAdapter } from "@/server/agents/command-adapter";
import { createScriptedAdapter } from "@/server/agents/scripted-adapter";
import { type AgentAdapter, AgentStartError } from "@/server/agents/types";
import type { KnownSecret } from "@/server/domain/context/redaction/redact";
import type { AdmissionDecision } from "@/server/domain/pools/admission";
import type { ClaimResult } from "@/server/domain/runs/claim-attempt";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { envVarName, grantedValue } from "@/server/env";
import type { RunnerSettings } from "./execute-attempt";

// Which adapter runs an attempt, and the environment it gets. Only granted secrets and config
// maps reach the agent, by value from the server environment (AIRLOCK_SECRET_<NAME>), under
// their plain names; the values are also handed to the transcript redactor.

export type KubeLauncher = {
  /** An adapter that runs the attempt as a Kubernetes Job in the pool's namespace. */
  adapterFor(claim: Extract<ClaimResult, { kind: "started" }>, spec: StackSpec): AgentAdapter;
};

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

export function buildAdapter(opts: { spec: StackSpec; claim: Extract<ClaimResult, { kind: "started" }>; settings: RunnerSettings }): AgentAdapter {
  const { spec, claim, settings } = opts;
  if (claim.pool.kind === "kubernetes") {
    if (!settings.kube) {
      throw new AgentStartError(`pool ${claim.pool.name} runs on Kubernetes and no cluster is configured (set AIRLOCK_K8S_CONFIG)`);
    }
    return settings.kube.adapterFor(claim, spec);
  }
  if (spec.adapter.kind === "scripted") return createScriptedAdapter({ scenario: spec.adapter.scenario, speed: settings.scriptedSpeed });
  return createCommandAdapter({ argv: spec.adapter.command, outputFormat: spec.adapter.outputFormat });
}
