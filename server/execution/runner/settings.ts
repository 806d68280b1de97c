import type { SandboxAvailable } from "@/server/domain/pools/sandbox-admission";
import type { AgentAdapter } from "@/server/execution/agents/types";
import type { ClaimResult } from "@/server/domain/run-engine/claim-attempt";
import type { StackSpec } from "@/server/domain/stacks/spec";

/** How this worker runs attempts: its data folder, timings and launchers. */
export type RunnerSettings = {
  dataDir: string;
  heartbeatIntervalMs: number;
  eventBatchMs: number;
  keepFailedWorkspaceMs: number;
  scriptedSpeed: number;
  approvalTtlMs: number;
  kube: KubeLauncher | null;
  /** How long each MCP server's health check may take before launch (default 10 s). */
  mcpHealthTimeoutMs?: number;
  /** Overrides the probe of this machine's sandbox (tests of a machine without one). */
  sandbox?: SandboxAvailable;
};

export type KubeLauncher = {
  /** An adapter that runs the attempt as a Kubernetes Job in the pool's namespace. */
  adapterFor(claim: Extract<ClaimResult, { kind: "started" }>, spec: StackSpec): AgentAdapter;
};
