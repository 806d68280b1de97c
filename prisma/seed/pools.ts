import type { PoolKind, PrismaClient, TaskKind, TrustTier } from "@/server/db";
import type { StackIds, StackName } from "./stacks";

// Service accounts, runner pools, and the secret/config grants stacks may read.
// Fork PRs and untrusted refs land on `untrusted-sandbox`, whose accounts are
// unprivileged and which never receives a privileged secret. Read-only work on trusted refs
// (diagnose, triage) lands on `trusted-readonly`, whose runtime account is unprivileged too:
// admission prefers it over `trusted-local` whenever the run gets no privileged credentials.

export const serviceAccounts = [
  { name: "agent-runtime-privileged", namespace: "airlock", privileged: true, description: "Runtime identity of trusted agent sessions; may receive privileged secrets such as GITHUB_TOKEN." },
  { name: "agent-runtime-readonly", namespace: "airlock", privileged: false, description: "Runtime identity of read-only agent sessions on trusted refs (diagnose, triage): model API and repository read access, no write scopes." },
  { name: "runner-local", namespace: "airlock", privileged: false, description: "Launches local runner processes; holds no repository credentials." },
  { name: "agent-runtime-sandbox", namespace: "airlock-sandbox", privileged: false, description: "Runtime identity for fork PRs and untrusted refs: model API access only, no repository write scopes." },
  { name: "runner-sandbox", namespace: "airlock-sandbox", privileged: false, description: "Launches sandboxed runners with egress restricted to the model provider." },
  { name: "agent-runtime-k8s", namespace: "airlock-agents", privileged: true, description: "Runtime identity for batch agent jobs (triage, release review) on the cluster." },
  { name: "runner-k8s", namespace: "airlock-agents", privileged: false, description: "Creates the Kubernetes Job for each attempt; RBAC limited to jobs and pods in airlock-agents." },
] as const;

export type PoolName = "trusted-local" | "trusted-readonly" | "untrusted-sandbox" | "k8s-batch";

export const runnerPools: {
  name: PoolName;
  trustTier: TrustTier;
  kind: PoolKind;
  concurrency: number;
  allowedTaskKinds: TaskKind[];
  runtime: (typeof serviceAccounts)[number]["name"];
  runner: (typeof serviceAccounts)[number]["name"];
}[] = [
  { name: "trusted-local", trustTier: "trusted", kind: "local", concurrency: 4, allowedTaskKinds: ["diagnose", "repair", "triage", "release_review"], runtime: "agent-runtime-privileged", runner: "runner-local" },
  { name: "trusted-readonly", trustTier: "trusted", kind: "local", concurrency: 4, allowedTaskKinds: ["diagnose", "triage"], runtime: "agent-runtime-readonly", runner: "runner-local" },
  { name: "untrusted-sandbox", trustTier: "untrusted", kind: "local", concurrency: 2, allowedTaskKinds: ["diagnose", "repair"], runtime: "agent-runtime-sandbox", runner: "runner-sandbox" },
  { name: "k8s-batch", trustTier: "trusted", kind: "kubernetes", concurrency: 8, allowedTaskKinds: ["diagnose", "triage", "release_review"], runtime: "agent-runtime-k8s", runner: "runner-k8s" },
];

export const poolByName = (name: PoolName) => {
  const pool = runnerPools.find((p) => p.name === name);
  if (!pool) throw new Error(`seed: no pool ${name}`);
  return pool;
};

type SecretGrantSeed = { secretName: string; stack: StackName | null; privileged: boolean; trustedPoolsOnly: boolean; taskKinds: TaskKind[] };
type ConfigGrantSeed = { configMapName: string; stack: StackName | null; trustedPoolsOnly: boolean; taskKinds: TaskKind[] };

export const secretGrants: SecretGrantSeed[] = [
  { secretName: "ANTHROPIC_API_KEY", stack: "claude-code-ci-diagnoser", privileged: false, trustedPoolsOnly: false, taskKinds: [] },
  { secretName: "anthropic-api-key", stack: "claude-code-ci-diagnoser", privileged: false, trustedPoolsOnly: false, taskKinds: [] },
  { secretName: "GITHUB_TOKEN", stack: "claude-code-ci-diagnoser", privileged: true, trustedPoolsOnly: true, taskKinds: ["repair"] },
  { secretName: "sentry-auth-token", stack: "claude-code-ci-diagnoser", privileged: false, trustedPoolsOnly: true, taskKinds: ["diagnose", "repair", "triage"] },
  { secretName: "ANTHROPIC_API_KEY", stack: "release-reviewer", privileged: false, trustedPoolsOnly: true, taskKinds: ["release_review"] },
  { secretName: "NPM_TOKEN", stack: "release-reviewer", privileged: true, trustedPoolsOnly: true, taskKinds: ["release_review"] },
  { secretName: "SENTRY_DSN", stack: null, privileged: false, trustedPoolsOnly: false, taskKinds: [] },
];

export const configGrants: ConfigGrantSeed[] = [
  { configMapName: "airlock-ci-endpoints", stack: null, trustedPoolsOnly: false, taskKinds: [] },
  { configMapName: "sentry-org", stack: "claude-code-ci-diagnoser", trustedPoolsOnly: true, taskKinds: ["diagnose", "repair", "triage"] },
  { configMapName: "release-channels", stack: "release-reviewer", trustedPoolsOnly: true, taskKinds: ["release_review"] },
];

export type Admission = {
  admitted: boolean;
  poolName: PoolName;
  trustTier: TrustTier;
  runtimeServiceAccount: string;
  runnerServiceAccount: string;
  secretsGranted: string[];
  secretsDenied: { name: string; reason: string }[];
  configMapsGranted: string[];
  summary: string;
};

/**
 * What admission grants a run of `stack` for `taskKind` on `pool`: the same
 * reading of the grants the worker applies (task kind, trusted pools only,
 * privileged secrets never on an untrusted pool or for a fork).
 */
export function admit(opts: { stack: StackName; requested: string[]; taskKind: TaskKind; pool: PoolName; isFork: boolean }): Admission {
  const pool = poolByName(opts.pool);
  const trusted = pool.trustTier === "trusted" && !opts.isFork;
  const granted: string[] = [];
  const denied: { name: string; reason: string }[] = [];
  for (const name of opts.requested) {
    const grant = secretGrants.find((g) => g.secretName === name && (g.stack === opts.stack || g.stack === null));
    if (!grant) denied.push({ name, reason: `no grant for ${opts.stack}` });
    else if (grant.taskKinds.length > 0 && !grant.taskKinds.includes(opts.taskKind)) {
      denied.push({ name, reason: `granted for ${grant.taskKinds.join(", ")} only, not ${opts.taskKind}` });
    } else if (grant.privileged && !trusted) {
      denied.push({ name, reason: opts.isFork ? "privileged secret: fork PRs never receive privileged secrets" : "privileged secret: untrusted pool" });
    } else if (grant.trustedPoolsOnly && pool.trustTier !== "trusted") denied.push({ name, reason: "granted on trusted pools only" });
    else granted.push(name);
  }
  const configMaps = configGrants
    .filter((g) => (g.stack === opts.stack || g.stack === null) && (g.taskKinds.length === 0 || g.taskKinds.includes(opts.taskKind)))
    .filter((g) => !g.trustedPoolsOnly || pool.trustTier === "trusted")
    .map((g) => g.configMapName);
  const summary = opts.isFork
    ? "Fork PR: forced onto an untrusted pool with unprivileged service accounts and no privileged secrets."
    : pool.kind === "kubernetes"
      ? `Batch ${opts.taskKind.replace("_", " ")} on a trusted ref runs on the cluster pool.`
      : `Trusted ref, ${opts.taskKind.replace("_", " ")}: the trusted local pool with its runtime account.`;
  return {
    admitted: true,
    poolName: pool.name,
    trustTier: pool.trustTier,
    runtimeServiceAccount: pool.runtime,
    runnerServiceAccount: pool.runner,
    secretsGranted: granted,
    secretsDenied: denied,
    configMapsGranted: configMaps,
    summary,
  };
}

export type PoolIds = Record<PoolName, string>;

export async function seedPools(db: PrismaClient, now: Date, stacks: StackIds): Promise<PoolIds> {
  const createdAt = new Date(now.getTime() - 13 * 24 * 3600_000);
  await db.serviceAccount.createMany({ data: serviceAccounts.map((sa) => ({ ...sa, createdAt })), skipDuplicates: true });
  const accounts = await db.serviceAccount.findMany({ where: { name: { in: serviceAccounts.map((sa) => sa.name) } }, select: { id: true, name: true } });
  const saId = (name: string) => {
    const sa = accounts.find((a) => a.name === name);
    if (!sa) throw new Error(`seed: service account ${name} is missing`);
    return sa.id;
  };
  await db.runnerPool.createMany({
    data: runnerPools.map((p) => ({
      name: p.name,
      trustTier: p.trustTier,
      kind: p.kind,
      concurrency: p.concurrency,
      allowedTaskKinds: p.allowedTaskKinds,
      runtimeServiceAccountId: saId(p.runtime),
      runnerServiceAccountId: saId(p.runner),
      createdAt,
      updatedAt: createdAt,
    })),
    skipDuplicates: true,
  });
  const pools = await db.runnerPool.findMany({ where: { name: { in: runnerPools.map((p) => p.name) } }, select: { id: true, name: true } });

  // (name, stackId) is unique, but NULL stack ids never conflict in PostgreSQL: compare first.
  const stackId = (name: StackName | null) => (name ? stacks[name].id : null);
  const secrets = await db.secretGrant.findMany({ where: { secretName: { in: secretGrants.map((g) => g.secretName) } }, select: { secretName: true, stackId: true } });
  await db.secretGrant.createMany({
    data: secretGrants
      .filter((g) => !secrets.some((e) => e.secretName === g.secretName && e.stackId === stackId(g.stack)))
      .map((g) => ({ secretName: g.secretName, stackId: stackId(g.stack), privileged: g.privileged, trustedPoolsOnly: g.trustedPoolsOnly, taskKinds: g.taskKinds, createdAt })),
  });
  const configs = await db.configGrant.findMany({ where: { configMapName: { in: configGrants.map((g) => g.configMapName) } }, select: { configMapName: true, stackId: true } });
  await db.configGrant.createMany({
    data: configGrants
      .filter((g) => !configs.some((e) => e.configMapName === g.configMapName && e.stackId === stackId(g.stack)))
      .map((g) => ({ configMapName: g.configMapName, stackId: stackId(g.stack), trustedPoolsOnly: g.trustedPoolsOnly, taskKinds: g.taskKinds, createdAt })),
  });
  return Object.fromEntries(pools.map((p) => [p.name, p.id])) as PoolIds;
}
