import type { Db, RunStatus } from "@/server/db";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import type { UserActor } from "../actor";
import { diffStackSpecs, type StackSpecDiff } from "./diff";
import { stackCreateRight, stackEditRight, type EditRight } from "./permissions";
import { specOf } from "./stacks-service";
import type { StackSpec } from "./spec";

// What the stacks pages show: the list with usage, one stack with its versions, and diffs.

export type StackListItem = {
  id: string;
  name: string;
  description: string;
  version: number;
  archivedAt: Date | null;
  updatedAt: Date;
  modelProvider: StackSpec["modelProvider"];
  model: string;
  adapter: StackSpec["adapter"]["kind"];
  approvalMode: StackSpec["approvalMode"];
  usedByRules: number;
  lastRun: { id: string; number: number; status: RunStatus; createdAt: Date } | null;
};

export async function listStacks(opts: { db: Db; actor: UserActor }): Promise<{ stacks: StackListItem[]; canCreate: EditRight }> {
  const { db } = opts;
  const visible = await visibleRepositoryIds(db, opts.actor);
  const stacks = await db.agentStack.findMany({
    orderBy: [{ archivedAt: { sort: "desc", nulls: "first" } }, { name: "asc" }],
    select: { id: true, name: true, description: true, version: true, archivedAt: true, updatedAt: true, _count: { select: { triggerRules: true } } },
  });
  const current = await db.agentStackVersion.findMany({
    where: { OR: stacks.map((s) => ({ stackId: s.id, version: s.version })) },
    select: { stackId: true, spec: true },
  });
  // The last run each stack made that this user may see.
  const lastRuns = await Promise.all(
    stacks.map((s) =>
      db.agentDispatchRun.findFirst({
        where: { stackId: s.id, ...(visible === "all" ? {} : { repositoryId: { in: visible } }) },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        select: { id: true, number: true, status: true, createdAt: true },
      }),
    ),
  );
  const items = stacks.flatMap((s, i): StackListItem[] => {
    const row = current.find((v) => v.stackId === s.id);
    if (!row) return [];
    const spec = specOf(row.spec);
    return [
      {
        id: s.id,
        name: s.name,
        description: s.description,
        version: s.version,
        archivedAt: s.archivedAt,
        updatedAt: s.updatedAt,
        modelProvider: spec.modelProvider,
        model: spec.model,
        adapter: spec.adapter.kind,
        approvalMode: spec.approvalMode,
        usedByRules: s._count.triggerRules,
        lastRun: lastRuns[i] ?? null,
      },
    ];
  });
  return { stacks: items, canCreate: await stackCreateRight(db, opts.actor) };
}

export type StackVersionSummary = { version: number; digest: string; createdAt: Date; createdBy: string | null };

export type StackDetail = {
  id: string;
  name: string;
  description: string;
  version: number;
  archivedAt: Date | null;
  digest: string;
  spec: StackSpec;
  versions: StackVersionSummary[];
  rules: { id: string; name: string; kind: string; enabled: boolean; repository: string | null }[];
  canEdit: EditRight;
  canCreate: EditRight;
};

export async function getStack(opts: { db: Db; actor: UserActor; stackId: string }): Promise<StackDetail> {
  const { db } = opts;
  const stack = await db.agentStack.findUnique({
    where: { id: opts.stackId },
    select: { id: true, name: true, description: true, version: true, archivedAt: true },
  });
  if (!stack) throw new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" });
  const [versions, rules, canEdit, canCreate] = await Promise.all([
    db.agentStackVersion.findMany({
      where: { stackId: stack.id },
      orderBy: { version: "desc" },
      select: { version: true, digest: true, createdAt: true, createdById: true, spec: true },
    }),
    db.triggerRule.findMany({
      where: { stackId: stack.id },
      orderBy: { name: "asc" },
      select: { id: true, name: true, kind: true, enabled: true, repository: { select: { fullName: true } } },
    }),
    stackEditRight(db, opts.actor, stack.id),
    stackCreateRight(db, opts.actor),
  ]);
  const current = versions.find((v) => v.version === stack.version);
  if (!current) throw new AppError("INTERNAL", `stack ${stack.id} has no version ${stack.version}`);
  const authors = await db.user.findMany({
    where: { id: { in: [...new Set(versions.flatMap((v) => (v.createdById ? [v.createdById] : [])))] } },
    select: { id: true, email: true },
  });
  return {
    ...stack,
    digest: current.digest,
    spec: specOf(current.spec),
    versions: versions.map((v) => ({
      version: v.version,
      digest: v.digest,
      createdAt: v.createdAt,
      createdBy: authors.find((a) => a.id === v.createdById)?.email ?? null,
    })),
    rules: rules.map((r) => ({ id: r.id, name: r.name, kind: r.kind, enabled: r.enabled, repository: r.repository?.fullName ?? null })),
    canEdit: stack.archivedAt ? { allowed: false, reason: "This stack is archived: restore it to edit." } : canEdit,
    canCreate,
  };
}

export async function getStackVersionSpec(db: Db, stackId: string, version: number): Promise<StackSpec> {
  const row = await db.agentStackVersion.findUnique({ where: { stackId_version: { stackId, version } }, select: { spec: true } });
  if (!row) throw new AppError("NOT_FOUND", `The stack has no version ${version}.`, { reason: "no_such_version" });
  return specOf(row.spec);
}

export async function diffStackVersions(opts: {
  db: Db;
  stackId: string;
  from: number;
  to: number;
}): Promise<StackSpecDiff & { from: number; to: number }> {
  const [before, after] = await Promise.all([
    getStackVersionSpec(opts.db, opts.stackId, opts.from),
    getStackVersionSpec(opts.db, opts.stackId, opts.to),
  ]);
  return { ...diffStackSpecs(before, after), from: opts.from, to: opts.to };
}

/** Stacks a trigger rule may pick: not archived. */
export async function listStackOptions(db: Db) {
  return db.agentStack.findMany({ where: { archivedAt: null }, orderBy: { name: "asc" }, select: { id: true, name: true, version: true } });
}
