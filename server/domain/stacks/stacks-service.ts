import type { Db, Prisma } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { auditActorOf, type UserActor } from "../actor";
import { fieldError, isUniqueViolation, parseInput } from "../input";
import { refusableTransaction } from "../refusable";
import { diffStackSpecs, type StackSpecDiff } from "./diff";
import { assertRight, stackCreateRight, stackEditRight, type EditRight } from "./permissions";
import { zCreateStackInput, zUpdateStackInput } from "./schemas";
import { stackSnapshot, zStackSpec, type StackSpec } from "./spec";

// Creating and changing stacks. Every save appends an AgentStackVersion (the spec and the digest
// of the snapshot a run of it stores) and bumps AgentStack.version, which is also the optimistic
// concurrency token: a save names the version it was made from, and a save over a newer version
// is refused with what that version changed. Version, stack row and audit entry commit together.

export type SavedStack = { id: string; name: string; version: number; digest: string };

/** The conflict a stale save gets: who saved what since the form was loaded. */
export type StackConflictDetails = {
  expectedVersion: number;
  currentVersion: number;
  savedBy: string | null;
  savedAt: string;
  /** Their change: the spec at the version the form was loaded from -> the current spec. */
  theirChange: StackSpecDiff | null;
  current: { name: string; description: string; spec: StackSpec };
};

const asJson = (spec: StackSpec) => spec as unknown as Prisma.InputJsonValue;

export const specOf = (json: Prisma.JsonValue): StackSpec => zStackSpec.parse(json);

const nameTaken = (name: string) =>
  fieldError("CONFLICT", "name", `A stack called ${name} already exists: choose another name.`, "stack_name_taken");

export async function createStack(opts: { db: Db; actor: UserActor; input: unknown }): Promise<SavedStack> {
  const input = parseInput(zCreateStackInput, opts.input);
  assertRight(await stackCreateRight(opts.db, opts.actor));
  try {
    return await refusableTransaction(opts.db, "createStack", async (tx, refuse) => {
      if (await tx.agentStack.findUnique({ where: { name: input.name }, select: { id: true } })) refuse(nameTaken(input.name));
      const stack = await tx.agentStack.create({
        data: { name: input.name, description: input.description, version: 1 },
        select: { id: true },
      });
      const { digest } = stackSnapshot({ id: stack.id, name: input.name, version: 1, spec: input.spec });
      await tx.agentStackVersion.create({
        data: { stackId: stack.id, version: 1, spec: asJson(input.spec), digest, createdById: opts.actor.id },
      });
      await recordAudit(tx, {
        actor: auditActorOf(opts.actor),
        action: input.clonedFromId ? "stack.clone" : "stack.create",
        objectType: "AgentStack",
        objectId: stack.id,
        detail: { name: input.name, version: 1, digest, clonedFromId: input.clonedFromId ?? null },
      });
      return { id: stack.id, name: input.name, version: 1, digest };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

export async function updateStack(opts: { db: Db; actor: UserActor; input: unknown }): Promise<SavedStack & { diff: StackSpecDiff }> {
  const input = parseInput(zUpdateStackInput, opts.input);
  return refusableTransaction(opts.db, "updateStack", async (tx, refuse) => {
    const [locked] = await tx.$queryRaw<{ id: string; version: number; name: string; description: string; archivedAt: Date | null }[]>`
      SELECT "id", "version", "name", "description", "archivedAt" FROM "AgentStack" WHERE "id" = ${input.stackId} FOR UPDATE`;
    if (!locked) return refuse(new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" }));
    refuseUnless(await stackEditRight(tx, opts.actor, locked.id), refuse);
    if (locked.archivedAt) {
      refuse(new AppError("CONFLICT", `${locked.name} is archived: restore it before editing.`, { reason: "stack_archived" }));
    }
    const versions = await tx.agentStackVersion.findMany({
      where: { stackId: locked.id, version: { in: [locked.version, input.expectedVersion] } },
      select: { version: true, spec: true, createdAt: true, createdById: true },
    });
    const current = versions.find((v) => v.version === locked.version);
    if (!current) return refuse(new AppError("INTERNAL", `stack ${locked.id} has no version ${locked.version}`));
    const currentSpec = specOf(current.spec);

    if (locked.version !== input.expectedVersion) {
      const seen = versions.find((v) => v.version === input.expectedVersion);
      const author = current.createdById
        ? await tx.user.findUnique({ where: { id: current.createdById }, select: { email: true } })
        : null;
      const details: StackConflictDetails = {
        expectedVersion: input.expectedVersion,
        currentVersion: locked.version,
        savedBy: author?.email ?? null,
        savedAt: current.createdAt.toISOString(),
        theirChange: seen ? diffStackSpecs(specOf(seen.spec), currentSpec) : null,
        current: { name: locked.name, description: locked.description, spec: currentSpec },
      };
      const message =
        `${locked.name} was saved as version ${locked.version} by ${author?.email ?? "someone else"} since you opened version ` +
        `${input.expectedVersion}. Your changes were not saved; review their change below.`;
      refuse(new AppError("CONFLICT", message, { reason: "stale_version", details }));
    }

    const diff = diffStackSpecs(currentSpec, input.spec);
    if (!diff.changed && input.name === locked.name && input.description === locked.description) {
      refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${locked.version}.`, { reason: "unchanged" }));
    }
    if (input.name !== locked.name && (await tx.agentStack.findUnique({ where: { name: input.name }, select: { id: true } }))) {
      refuse(nameTaken(input.name));
    }
    const version = locked.version + 1;
    const { digest } = stackSnapshot({ id: locked.id, name: input.name, version, spec: input.spec });
    await tx.agentStackVersion.create({
      data: { stackId: locked.id, version, spec: asJson(input.spec), digest, createdById: opts.actor.id },
    });
    await tx.agentStack.update({
      where: { id: locked.id },
      data: { version, name: input.name, description: input.description },
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "stack.update",
      objectType: "AgentStack",
      objectId: locked.id,
      detail: {
        fromVersion: locked.version,
        toVersion: version,
        digest,
        changed: diff.changes.map((c) => c.path),
        ...(input.name !== locked.name ? { renamed: { from: locked.name, to: input.name } } : {}),
        ...(input.description !== locked.description ? { descriptionChanged: true } : {}),
      },
    });
    return { id: locked.id, name: input.name, version, digest, diff };
  });
}

function refuseUnless(right: EditRight, refuse: (e: AppError) => never): void {
  if (!right.allowed) refuse(new AppError("FORBIDDEN", right.reason, { reason: "stack_permission" }));
}

/**
 * Archives a stack: it leaves the pickers and can no longer be edited; runs keep their snapshots.
 * Refused while an enabled trigger rule still uses it (disable or repoint the rules first).
 */
export async function archiveStack(opts: { db: Db; actor: UserActor; stackId: string; now: Date }) {
  return refusableTransaction(opts.db, "archiveStack", async (tx, refuse) => {
    const stack = await tx.agentStack.findUnique({ where: { id: opts.stackId }, select: { id: true, name: true, archivedAt: true } });
    if (!stack) return refuse(new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" }));
    refuseUnless(await stackEditRight(tx, opts.actor, stack.id), refuse);
    if (stack.archivedAt) return { id: stack.id, archivedAt: stack.archivedAt };
    const rules = await tx.triggerRule.findMany({ where: { stackId: stack.id, enabled: true }, select: { id: true, name: true } });
    if (rules.length > 0) {
      refuse(new AppError(
        "CONFLICT",
        `${stack.name} is used by enabled trigger rule${rules.length === 1 ? "" : "s"} ${rules.map((r) => JSON.stringify(r.name)).join(", ")}: disable them or pick another stack first.`,
        { reason: "stack_in_use", details: { rules } },
      ));
    }
    const updated = await tx.agentStack.update({ where: { id: stack.id }, data: { archivedAt: opts.now }, select: { id: true, archivedAt: true } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "stack.archive", objectType: "AgentStack", objectId: stack.id, detail: { name: stack.name } });
    return updated;
  });
}

export async function restoreStack(opts: { db: Db; actor: UserActor; stackId: string }) {
  return refusableTransaction(opts.db, "restoreStack", async (tx, refuse) => {
    const stack = await tx.agentStack.findUnique({ where: { id: opts.stackId }, select: { id: true, name: true, archivedAt: true } });
    if (!stack) return refuse(new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" }));
    refuseUnless(await stackEditRight(tx, opts.actor, stack.id), refuse);
    if (!stack.archivedAt) return { id: stack.id, archivedAt: null };
    const updated = await tx.agentStack.update({ where: { id: stack.id }, data: { archivedAt: null }, select: { id: true, archivedAt: true } });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "stack.restore", objectType: "AgentStack", objectId: stack.id, detail: { name: stack.name } });
    return updated;
  });
}
