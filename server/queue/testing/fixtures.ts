import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { Prisma, TaskKind, TrustTier } from "@/server/db";
import { getDb } from "@/server/db";
import type { SessionUser } from "@/server/auth/roles";
import { commitFiles, ensureBareRepo } from "@/server/forges/local/repositories";
import { digestOf, sha256 } from "@/server/lib/digest";
import { type StackSpec, stackSnapshot, zStackSpec } from "@/server/domain/stacks/spec";
import { AttemptRegistry } from "@/server/execution/runner/attempt-registry";
import type { WorkerContext, WorkerSettings } from "../worker-context";

// Rows and folders the execution tests need (pools, stacks, runs on the local forge), created
// through the real tables; and a worker context for driving task handlers in-process.

const uid = () => randomBytes(4).toString("hex");

export async function createPool(opts: {
  name?: string;
  trustTier?: TrustTier;
  kind?: "local" | "kubernetes";
  concurrency?: number;
  allowedTaskKinds?: TaskKind[];
  runtimePrivileged?: boolean;
  /** Sandbox settings (defaults: restricted, no hosts, the default limits, never unsandboxed). */
  networkMode?: "none" | "restricted" | "open";
  allowedHosts?: string[];
  limits?: { memoryLimitMb?: number; processLimit?: number; cpuLimitSeconds?: number; diskLimitMb?: number };
  allowUnsandboxed?: boolean;
} = {}) {
  const db = getDb();
  const name = opts.name ?? `pool-${uid()}`;
  const runtime = await db.serviceAccount.create({ data: { name: `${name}-runtime`, privileged: opts.runtimePrivileged ?? false } });
  const runner = await db.serviceAccount.create({ data: { name: `${name}-runner`, privileged: false } });
  return db.runnerPool.create({
    data: {
      name,
      trustTier: opts.trustTier ?? "trusted",
      kind: opts.kind ?? "local",
      concurrency: opts.concurrency ?? 2,
      allowedTaskKinds: opts.allowedTaskKinds ?? [],
      ...(opts.networkMode ? { networkMode: opts.networkMode } : {}),
      allowedHosts: opts.allowedHosts ?? [],
      ...opts.limits,
      allowUnsandboxed: opts.allowUnsandboxed ?? false,
      runtimeServiceAccountId: runtime.id,
      runnerServiceAccountId: runner.id,
    },
  });
}

export function scriptedSpec(patch: Partial<StackSpec> = {}): StackSpec {
  return zStackSpec.parse({
    modelProvider: "local",
    model: "scripted",
    adapter: { kind: "scripted", scenario: "sum-off-by-one" },
    promptTemplate: "Fix {{repository.name}}",
    limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries: 1 },
    ...patch,
  });
}

export async function createStack(spec: StackSpec, name = `stack-${uid()}`) {
  const db = getDb();
  const stack = await db.agentStack.create({ data: { name, version: 1 } });
  const snap = stackSnapshot({ id: stack.id, name, version: 1, spec });
  await db.agentStackVersion.create({ data: { stackId: stack.id, version: 1, spec: spec as Prisma.InputJsonValue, digest: snap.digest } });
  return { ...stack, snapshot: snap.snapshot, digest: snap.digest, spec };
}

// Every data dir made here (bare repositories, workspaces) is removed after the test file, or
// when a bench (which imports this too, outside Vitest) exits.
const dataDirs: string[] = [];
const removeDataDirs = () => {
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
};
if (process.env.VITEST) afterAll(removeDataDirs);
else process.once("exit", removeDataDirs);

/** A bare repository in a fresh data dir with `files` committed on main, and its Repository row. */
export async function createLocalRepository(opts: { files: Record<string, string>; checkCommand?: string; members?: [SessionUser, "viewer" | "maintainer" | "admin"][] }) {
  const dataDir = await mkdtemp(join(tmpdir(), "airlock-data-"));
  dataDirs.push(dataDir);
  const fullName = `test/repo-${uid()}`;
  const { path } = await ensureBareRepo(dataDir, fullName, "main");
  const sha = await commitFiles({ repoPath: path, branch: "main", files: opts.files, message: "initial" });
  const db = getDb();
  const repository = await db.repository.create({
    data: { fullName, forge: "local", cloneUrl: `file://${path}`, checkCommand: opts.checkCommand ?? null, trustTier: "trusted" },
  });
  for (const [user, role] of opts.members ?? []) {
    await db.membership.create({ data: { userId: user.id, repositoryId: repository.id, role } });
  }
  return { dataDir, repository, sha, repoPath: path };
}

/** A queued (or other) run of `stack` at `sha`, acting for `actorUserId` (a maintainer) unless told otherwise. */
export async function createExecRun(opts: {
  repositoryId: string;
  stack: Awaited<ReturnType<typeof createStack>>;
  sha: string;
  status?: "suggested" | "queued";
  isFork?: boolean;
  actorUserId?: string | null;
  taskKind?: TaskKind;
  /** What the agent reads on stdin. */
  prompt?: string;
}) {
  const bundle = { repository: { id: opts.repositoryId } };
  const prompt = opts.prompt ?? "Fix the failing check.";
  return getDb().agentDispatchRun.create({
    data: {
      title: `Run ${uid()}`,
      repositoryId: opts.repositoryId,
      source: "manual",
      taskKind: opts.taskKind ?? "repair",
      actor: "tester",
      actorUserId: opts.actorUserId ?? null,
      status: opts.status ?? "queued",
      headSha: opts.sha,
      headBranch: "main",
      isFork: opts.isFork ?? false,
      stackId: opts.stack.id,
      stackVersion: 1,
      stackSnapshot: opts.stack.snapshot as Prisma.InputJsonValue,
      stackDigest: opts.stack.digest,
      contextBundle: bundle,
      contextDigest: digestOf(bundle),
      prompt,
      promptHash: `sha256:${sha256(prompt)}`,
      dedupeKey: `test:${uid()}`,
    },
  });
}

export function testWorkerContext(settings: Partial<WorkerSettings> & { dataDir: string }): WorkerContext {
  return {
    db: getDb(),
    settings: {
      heartbeatIntervalMs: 1_000,
      eventBatchMs: 5,
      keepFailedWorkspaceMs: 0,
      scriptedSpeed: 200,
      approvalTtlMs: 7 * 24 * 3600_000,
      kube: null,
      maxAttempts: 4,
      leaseMs: 60_000,
      reapIntervalMs: 60_000,
      ciTimeoutMs: 120_000,
      toolchainNodeModules: null,
      ...settings,
    },
    registry: new AttemptRegistry(),
    workerRef: () => `test/${process.pid}`,
    inflight: new Set(),
    claiming: { count: 0 },
    log: () => {},
  };
}

/** Waits until every attempt started through `ctx` has finished. */
export async function drain(ctx: WorkerContext): Promise<void> {
  while (ctx.inflight.size > 0) await Promise.allSettled([...ctx.inflight]);
}
