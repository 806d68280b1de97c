import type { TrustTier } from "@/server/db/generated/enums";
import { defaultSandboxLimits, type NetworkMode, type SandboxLimits } from "@/server/execution/sandbox/policy";

// Admission's part of the sandbox promise. Pure. A local pool runs its attempts in a sandbox;
// on a machine where none works, an untrusted pool is never chosen (fail closed, with the
// reason), and a trusted pool only where an admin allowed it to run unsandboxed. The network
// mode comes from the pool, with the run's declared `none` as a ceiling; `open` is for trusted
// pools running trusted code only, whatever the stored settings say.

export type PoolSandbox = { networkMode: NetworkMode; allowedHosts: string[]; limits: SandboxLimits; allowUnsandboxed: boolean };

export type SandboxAvailable = { available: boolean; reason: string | null };

export type AdmissionSandbox = {
  kind: "bubblewrap" | "kubernetes" | "unsandboxed" | "no_process";
  /** Why the attempt runs without a sandbox (unsandboxed, no_process). */
  reason: string | null;
  network: { mode: NetworkMode; allowedHosts: string[] };
  limits: SandboxLimits;
};

type Pool = { name: string; trustTier: TrustTier; kind: "local" | "kubernetes"; sandbox?: PoolSandbox };
type Input = {
  sandbox?: SandboxAvailable;
  agent?: { runsProcess: boolean; hosts: string[] };
  forgeHosts?: string[];
  /** The run's declared network (context bundle); `none` caps the pool's mode. */
  declaredNetwork?: NetworkMode;
};

const fallbackPool: PoolSandbox = { networkMode: "restricted", allowedHosts: [], limits: defaultSandboxLimits, allowUnsandboxed: false };
export const noSandboxReason = "sandbox unavailable: install bubblewrap";

/** Why a pool cannot take this attempt for want of a sandbox, or null when it can. */
export function sandboxSkipReason(input: Input, pool: Pool): string | null {
  if (pool.kind !== "local" || input.agent?.runsProcess === false || input.sandbox?.available) return null;
  const reason = input.sandbox?.reason ?? noSandboxReason;
  if (pool.trustTier === "untrusted") return reason;
  if (!(pool.sandbox ?? fallbackPool).allowUnsandboxed) return `${reason}; an admin may let this trusted pool run unsandboxed`;
  return null;
}

export function decideSandbox(input: Input, pool: Pool, untrustedCode: boolean): { decision: AdmissionSandbox; summary: string; overrides: string[] } {
  const settings = pool.sandbox ?? fallbackPool;
  const overrides: string[] = [];
  let mode = settings.networkMode;
  if (mode === "open" && (untrustedCode || pool.trustTier !== "trusted")) {
    mode = "restricted";
    overrides.push("open network is for trusted pools running trusted code only; restricted instead");
  }
  if (input.declaredNetwork === "none") mode = "none";
  const forge = pool.trustTier === "trusted" && !untrustedCode ? (input.forgeHosts ?? []) : [];
  const allowedHosts = mode === "none" ? [] : [...new Set([...(input.agent?.hosts ?? []), ...settings.allowedHosts, ...forge])];
  const network = { mode, allowedHosts };
  const base = { network, limits: settings.limits };
  if (input.agent?.runsProcess === false) {
    return { decision: { kind: "no_process", reason: "scripted demo agent: no process", ...base }, summary: "scripted demo agent: no process to sandbox", overrides };
  }
  if (pool.kind === "kubernetes") return { decision: { kind: "kubernetes", reason: null, ...base }, summary: `Kubernetes Job sandbox, network ${mode}`, overrides };
  if (input.sandbox?.available) return { decision: { kind: "bubblewrap", reason: null, ...base }, summary: `bubblewrap sandbox, network ${mode}`, overrides };
  const reason = `${input.sandbox?.reason ?? noSandboxReason}; an admin allowed pool ${pool.name} to run unsandboxed`;
  return { decision: { kind: "unsandboxed", reason, ...base }, summary: `NO SANDBOX: ${reason}`, overrides };
}
