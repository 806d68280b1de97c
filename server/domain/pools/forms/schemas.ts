// The runner pool, service account and grant forms' schemas: the pools procedures validate with
// these and the forms use the same ones. The trust rules a grant must keep are here too, so the
// form explains a refusal before the server repeats it. Nothing here needs Node.
import { z } from "zod";
import { zTaskKind, zTrustTier } from "@/server/domain/ci-events/schemas";
import { zId } from "@/server/lib/ids";
import { defaultSandboxLimits, zAllowedHost, zNetworkMode, zSandboxLimits } from "@/server/execution/sandbox/schemas";

export const POOL_KINDS = ["local", "kubernetes"] as const;

/** A Kubernetes-style name: service accounts and namespaces become real objects on a cluster. */
const zK8sName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(63, "At most 63 characters")
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "Lowercase letters, digits and dashes; starts and ends with a letter or digit");

const zTaskKinds = z
  .array(zTaskKind)
  .max(4)
  .refine((kinds) => new Set(kinds).size === kinds.length, "Each task kind once");

/** "" or null: no stack, i.e. every stack. */
const zOptionalStack = z
  .string()
  .max(100)
  .nullable()
  .transform((v) => (v === null || v === "" ? null : v));

const zVersionRef = { id: zId, expectedVersion: z.int().positive() };

const poolFields = {
  name: zK8sName,
  trustTier: zTrustTier,
  kind: z.enum(POOL_KINDS),
  concurrency: z.int("A whole number").min(1, "At least 1").max(64, "At most 64"),
  /** Empty: every task kind. */
  allowedTaskKinds: zTaskKinds,
  runtimeServiceAccountId: zId.min(1, "Pick a service account"),
  runnerServiceAccountId: zId.min(1, "Pick a service account"),
};

export const NETWORK_MODES = zNetworkMode.options;

/** The sandbox every attempt on the pool runs in (server/execution/sandbox). */
const sandboxFields = {
  networkMode: zNetworkMode,
  /** Hosts `restricted` lets through, besides the stack's model API (and, trusted, the forge). */
  allowedHosts: z
    .array(zAllowedHost)
    .max(50, "At most 50 hosts")
    .refine((hosts) => new Set(hosts).size === hosts.length, "Each host once"),
  memoryLimitMb: zSandboxLimits.shape.memoryMb,
  processLimit: zSandboxLimits.shape.processes,
  cpuLimitSeconds: zSandboxLimits.shape.cpuSeconds,
  diskLimitMb: zSandboxLimits.shape.diskMb,
  /** Trusted pools only: run without a sandbox on a machine where none works. */
  allowUnsandboxed: z.boolean(),
};

export const poolSandboxDefaults = {
  networkMode: "restricted" as const,
  allowedHosts: [] as string[],
  memoryLimitMb: defaultSandboxLimits.memoryMb,
  processLimit: defaultSandboxLimits.processes,
  cpuLimitSeconds: defaultSandboxLimits.cpuSeconds,
  diskLimitMb: defaultSandboxLimits.diskMb,
  allowUnsandboxed: false,
};

/**
 * An untrusted pool runs fork pull requests and unverified refs: it never gets an open network
 * and never runs unsandboxed. (Admission holds to this too, whatever is stored.)
 */
function poolTrustRules(v: { trustTier: string; networkMode?: string; allowUnsandboxed?: boolean }, ctx: z.RefinementCtx) {
  if (v.trustTier !== "trusted" && v.networkMode === "open") {
    ctx.addIssue({ code: "custom", path: ["networkMode"], message: "Open network is for trusted pools only: an untrusted pool runs fork pull requests." });
  }
  if (v.trustTier !== "trusted" && v.allowUnsandboxed) {
    ctx.addIssue({ code: "custom", path: ["allowUnsandboxed"], message: "An untrusted pool never runs without a sandbox." });
  }
}

const d = poolSandboxDefaults;
const withDefaults = {
  networkMode: sandboxFields.networkMode.default(d.networkMode),
  allowedHosts: sandboxFields.allowedHosts.default(d.allowedHosts),
  memoryLimitMb: sandboxFields.memoryLimitMb.default(d.memoryLimitMb),
  processLimit: sandboxFields.processLimit.default(d.processLimit),
  cpuLimitSeconds: sandboxFields.cpuLimitSeconds.default(d.cpuLimitSeconds),
  diskLimitMb: sandboxFields.diskLimitMb.default(d.diskLimitMb),
  allowUnsandboxed: sandboxFields.allowUnsandboxed.default(d.allowUnsandboxed),
};

/** A new pool: the sandbox settings default (restricted, the default limits, never unsandboxed). */
export const zRunnerPoolInput = z.object({ ...poolFields, ...withDefaults }).superRefine(poolTrustRules);
export type RunnerPoolFormValues = z.input<typeof zRunnerPoolInput>;
/** An edit names every field, the sandbox's too: an omitted one is never quietly reset. */
export const zUpdateRunnerPoolInput = z.object({ ...poolFields, ...sandboxFields, ...zVersionRef }).superRefine(poolTrustRules);

export const zServiceAccountInput = z.object({
  name: zK8sName,
  namespace: zK8sName,
  privileged: z.boolean(),
  description: z.string().trim().max(300, "At most 300 characters"),
});
export type ServiceAccountFormValues = z.input<typeof zServiceAccountInput>;
export const zUpdateServiceAccountInput = zServiceAccountInput.extend(zVersionRef);

const zSecretName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(253, "At most 253 characters")
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, "Letters, digits, dot, dash and underscore (the secret's name, never its value)");

export const GRANT_POOL_SCOPES = ["trust_tier", "named_pools"] as const;

/** Pools a grant may name: ids, each once. Ignored (emptied) when the grant is scoped by trust tier. */
const zPoolIds = z
  .array(zId)
  .max(32, "At most 32 pools")
  .refine((ids) => new Set(ids).size === ids.length, "Each pool once");

/** What the trust rules need to know about a named pool. */
export type GrantPoolFacts = { id: string; name: string; trustTier: "trusted" | "untrusted" };

type GrantScopeValues = { trustedPoolsOnly: boolean; poolScope: (typeof GRANT_POOL_SCOPES)[number]; poolIds: readonly string[] };

/**
 * Why a grant's pool scope is wrong, or null: a named scope names at least one pool, every named
 * pool exists, and none is untrusted when the grant is for trusted pools only or the secret is
 * privileged (untrusted pools run fork pull requests and unverified refs). `pools` is every pool
 * (the form passes the ones it lists; the domain reads them under lock), or null when unknown.
 */
export function grantScopeProblem(grant: GrantScopeValues & { privileged?: boolean }, pools: readonly GrantPoolFacts[] | null) {
  if (grant.poolScope !== "named_pools") return null;
  if (grant.poolIds.length === 0) return { field: "poolIds" as const, message: "Name at least one pool, or scope the grant by trust tier." };
  // Without the pool list (a procedure's input check) the rest waits for the domain.
  if (pools === null) return null;
  const missing = grant.poolIds.filter((id) => !pools.some((p) => p.id === id));
  if (missing.length > 0) return { field: "poolIds" as const, message: "A named pool no longer exists: reload and pick again." };
  const untrusted = pools.filter((p) => grant.poolIds.includes(p.id) && p.trustTier === "untrusted").map((p) => p.name);
  if (untrusted.length > 0 && grant.privileged) {
    return {
      field: "poolIds" as const,
      message: `A privileged secret can never be granted to an untrusted pool (${untrusted.join(", ")}): untrusted pools run fork pull requests and unverified refs.`,
    };
  }
  if (untrusted.length > 0 && grant.trustedPoolsOnly) {
    return { field: "poolIds" as const, message: `${untrusted.join(", ")} is untrusted, and this grant is for trusted pools only: uncheck one of them.` };
  }
  return null;
}

/**
 * Why a secret grant breaks the trust rules, or null. A privileged secret reaches trusted pools
 * only (untrusted pools run fork PRs and unverified refs) and only for the task kinds it names.
 * Then the pool scope (grantScopeProblem; the named pools' tiers only when `pools` is given).
 */
export function secretGrantProblem(
  grant: { privileged: boolean; trustedPoolsOnly: boolean; taskKinds: readonly string[] } & Partial<GrantScopeValues>,
  pools?: readonly GrantPoolFacts[],
) {
  if (grant.privileged && !grant.trustedPoolsOnly) {
    return {
      field: "trustedPoolsOnly" as const,
      message:
        "A privileged secret can never be granted to untrusted pools: they run fork pull requests and unverified refs. Keep it on trusted pools only, or mark the secret unprivileged.",
    };
  }
  if (grant.privileged && grant.taskKinds.length === 0) {
    return { field: "taskKinds" as const, message: "A privileged secret must name the task kinds that may receive it." };
  }
  if (grant.poolScope) return grantScopeProblem({ ...grant, poolScope: grant.poolScope, poolIds: grant.poolIds ?? [] }, pools ?? null);
  return null;
}

/** A trust-tier grant names no pools, whatever the form still held; named pools in one order. */
const dropPoolsUnlessNamed = <T extends { poolScope: string; poolIds: string[] }>(v: T): T => ({
  ...v,
  poolIds: v.poolScope === "named_pools" ? [...v.poolIds].sort() : [],
});

/** The fields alone; the domain checks the trust rules itself (secretGrantProblem) to name the reason. */
const zSecretGrantObject = z.object({
  secretName: zSecretName,
  stackId: zOptionalStack,
  privileged: z.boolean(),
  trustedPoolsOnly: z.boolean(),
  // Defaults keep callers from before named pools working (a trust-tier grant).
  poolScope: z.enum(GRANT_POOL_SCOPES).default("trust_tier"),
  poolIds: zPoolIds.default([]),
  /** Empty: every task kind. */
  taskKinds: zTaskKinds,
});
export const zSecretGrantFields = zSecretGrantObject.transform(dropPoolsUnlessNamed);
const checkSecretGrant = (pools?: readonly GrantPoolFacts[]) => (grant: z.output<typeof zSecretGrantFields>, ctx: z.RefinementCtx) => {
  const problem = secretGrantProblem(grant, pools);
  if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
};
/** The form's schema: with the pools it lists, named untrusted pools are explained before saving. */
export const secretGrantSchema = (pools?: readonly GrantPoolFacts[]) => zSecretGrantFields.superRefine(checkSecretGrant(pools));
export const zSecretGrantInput = secretGrantSchema();
export type SecretGrantFormValues = z.input<typeof zSecretGrantInput>;
export const zUpdateSecretGrantFields = zSecretGrantObject.extend(zVersionRef).transform(dropPoolsUnlessNamed);
export const zUpdateSecretGrantInput = zUpdateSecretGrantFields.superRefine(checkSecretGrant());

const zConfigGrantObject = z.object({
  configMapName: zK8sName,
  stackId: zOptionalStack,
  trustedPoolsOnly: z.boolean(),
  // Defaults keep callers from before named pools working (a trust-tier grant).
  poolScope: z.enum(GRANT_POOL_SCOPES).default("trust_tier"),
  poolIds: zPoolIds.default([]),
  taskKinds: zTaskKinds,
});
export const zConfigGrantFields = zConfigGrantObject.transform(dropPoolsUnlessNamed);
const checkConfigGrant = (pools?: readonly GrantPoolFacts[]) => (grant: z.output<typeof zConfigGrantFields>, ctx: z.RefinementCtx) => {
  const problem = grantScopeProblem(grant, pools ?? null);
  if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
};
export const configGrantSchema = (pools?: readonly GrantPoolFacts[]) => zConfigGrantFields.superRefine(checkConfigGrant(pools));
export const zConfigGrantInput = configGrantSchema();
export type ConfigGrantFormValues = z.input<typeof zConfigGrantInput>;
export const zUpdateConfigGrantFields = zConfigGrantObject.extend(zVersionRef).transform(dropPoolsUnlessNamed);
export const zUpdateConfigGrantInput = zUpdateConfigGrantFields.superRefine(checkConfigGrant());

export const zVersionRefInput = z.object(zVersionRef);
