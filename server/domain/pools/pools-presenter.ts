import type { Db, GrantPoolScope, TaskKind, TrustTier } from "@/server/db";
import type { UserActor } from "../actor";

// What /settings/pools shows: pools with their service accounts, the accounts and who uses them,
// and every grant with the pools and task kinds that may receive it (names only, never values).

const ALL_TASK_KINDS: TaskKind[] = ["diagnose", "repair", "triage", "release_review"];

type PoolFacts = { id: string; name: string; trustTier: TrustTier; allowedTaskKinds: TaskKind[] };

/** The pools a grant reaches and, on each, the task kinds both allow (empty lists mean every kind). */
export function grantReceivers(
  grant: { privileged?: boolean; trustedPoolsOnly: boolean; poolScope?: GrantPoolScope; poolIds?: string[]; taskKinds: TaskKind[] },
  pools: readonly PoolFacts[],
) {
  const wanted = grant.taskKinds.length === 0 ? ALL_TASK_KINDS : grant.taskKinds;
  return pools.flatMap((pool) => {
    if (grant.poolScope === "named_pools" && !(grant.poolIds ?? []).includes(pool.id)) return [];
    if (pool.trustTier !== "trusted" && (grant.trustedPoolsOnly || grant.privileged)) return [];
    const runs = pool.allowedTaskKinds.length === 0 ? ALL_TASK_KINDS : pool.allowedTaskKinds;
    const taskKinds = wanted.filter((k) => runs.includes(k));
    return taskKinds.length === 0 ? [] : [{ poolId: pool.id, pool: pool.name, trustTier: pool.trustTier, taskKinds }];
  });
}

export async function getPoolSettings(opts: { db: Db; actor: UserActor }) {
  const { db } = opts;
  const [pools, accounts, secretGrants, configGrants, stacks] = await Promise.all([
    db.runnerPool.findMany({
      orderBy: { name: "asc" },
      include: {
        runtimeServiceAccount: { select: { id: true, name: true, namespace: true, privileged: true } },
        runnerServiceAccount: { select: { id: true, name: true, namespace: true, privileged: true } },
      },
    }),
    db.serviceAccount.findMany({ orderBy: { name: "asc" } }),
    db.secretGrant.findMany({ orderBy: [{ secretName: "asc" }, { id: "asc" }] }),
    db.configGrant.findMany({ orderBy: [{ configMapName: "asc" }, { id: "asc" }] }),
    db.agentStack.findMany({ orderBy: { name: "asc" }, select: { id: true, name: true, archivedAt: true } }),
  ]);
  const stackName = (id: string | null) => (id === null ? null : (stacks.find((s) => s.id === id)?.name ?? "(deleted stack)"));
  return {
    canEdit: opts.actor.isAdmin ? { allowed: true as const, reason: null } : { allowed: false as const, reason: "Only an Airlock admin can change pools, service accounts and grants." },
    pools,
    serviceAccounts: accounts.map((a) => ({
      ...a,
      usedBy: pools.filter((p) => p.runtimeServiceAccountId === a.id || p.runnerServiceAccountId === a.id).map((p) => p.name),
    })),
    secretGrants: secretGrants.map((g) => ({ ...g, stackName: stackName(g.stackId), receivers: grantReceivers(g, pools) })),
    configGrants: configGrants.map((g) => ({ ...g, stackName: stackName(g.stackId), receivers: grantReceivers(g, pools) })),
    stacks: stacks.filter((s) => s.archivedAt === null).map((s) => ({ id: s.id, name: s.name })),
  };
}
