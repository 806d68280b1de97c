import { z } from "zod";
import { GrantPoolScope, NetworkMode, PoolKind, TaskKind, TrustTier } from "@/server/db/generated/enums";
import { zRight } from "./shared";

// What /settings/pools sends to the browser (server/domain/pools/): pools, service accounts and
// grants by name, never a secret's or config map's value. A column added to one of these tables
// reaches the page only when it is added here too.

const zTaskKinds = z.array(z.enum(TaskKind));
const zServiceAccountRef = z.object({ id: z.string(), name: z.string(), namespace: z.string(), privileged: z.boolean() });

export const zRunnerPool = z.object({
  id: z.string(),
  name: z.string(),
  trustTier: z.enum(TrustTier),
  kind: z.enum(PoolKind),
  concurrency: z.number().int(),
  allowedTaskKinds: zTaskKinds,
  networkMode: z.enum(NetworkMode),
  allowedHosts: z.array(z.string()),
  memoryLimitMb: z.number().int(),
  processLimit: z.number().int(),
  cpuLimitSeconds: z.number().int(),
  diskLimitMb: z.number().int(),
  allowUnsandboxed: z.boolean(),
  runtimeServiceAccountId: z.string(),
  runnerServiceAccountId: z.string(),
  version: z.number().int(),
  createdAt: z.date(),
  updatedAt: z.date(),
});

export const zServiceAccount = z.object({
  id: z.string(),
  name: z.string(),
  namespace: z.string(),
  privileged: z.boolean(),
  description: z.string(),
  version: z.number().int(),
  createdAt: z.date(),
  updatedAt: z.date(),
});

const zGrantScope = {
  id: z.string(),
  stackId: z.string().nullable(),
  trustedPoolsOnly: z.boolean(),
  poolScope: z.enum(GrantPoolScope),
  poolIds: z.array(z.string()),
  taskKinds: zTaskKinds,
  version: z.number().int(),
  createdAt: z.date(),
  updatedAt: z.date(),
};
export const zSecretGrant = z.object({ ...zGrantScope, secretName: z.string(), privileged: z.boolean() });
export const zConfigGrant = z.object({ ...zGrantScope, configMapName: z.string() });

const zReceivers = z.array(z.object({ poolId: z.string(), pool: z.string(), trustTier: z.enum(TrustTier), taskKinds: zTaskKinds }));
const zGrantView = { stackName: z.string().nullable(), receivers: zReceivers };

export const zPoolSettings = z.object({
  canEdit: zRight,
  pools: z.array(zRunnerPool.extend({ runtimeServiceAccount: zServiceAccountRef, runnerServiceAccount: zServiceAccountRef })),
  serviceAccounts: z.array(zServiceAccount.extend({ usedBy: z.array(z.string()) })),
  secretGrants: z.array(zSecretGrant.extend(zGrantView)),
  configGrants: z.array(zConfigGrant.extend(zGrantView)),
  stacks: z.array(z.object({ id: z.string(), name: z.string() })),
});
