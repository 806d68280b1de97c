import { z } from "zod";
import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";
import type { UserActor } from "../actor";
import { parseInput } from "../input";
import { diffStackSpecs, type SpecChange } from "../stacks/diff";
import { zStackInput } from "../stacks/schemas";
import { createStack, specOf, updateStack } from "../stacks/stacks-service";

// Stacks as a file a repository can review (the CLI's `stacks export|apply` writes and reads it
// as YAML). Stacks are matched by name. Apply plans first: each entry is parsed as the stack form
// parses it (defaults filled), so an exported file, or one applied before, plans "unchanged" and
// saves nothing; a change is saved as the next version through the stacks service, with its
// permission checks and its guard against a version saved in between.

export const zStacksFile = z.object({ stacks: z.array(zStackInput).max(200) });

export type FileChange = { path: string; before: string | null; after: string | null };
export type PlanEntry = { name: string; action: "create" | "update" | "unchanged"; changes: FileChange[]; version: number | null };

export async function exportStacks(db: Db) {
  const stacks = await db.agentStack.findMany({ where: { archivedAt: null }, orderBy: { name: "asc" }, select: { id: true, name: true, description: true, version: true } });
  const versions = await db.agentStackVersion.findMany({ where: { OR: stacks.map((s) => ({ stackId: s.id, version: s.version })) }, select: { stackId: true, spec: true } });
  const specs = new Map(versions.map((v) => [v.stackId, specOf(v.spec)]));
  return { stacks: stacks.map((s) => ({ name: s.name, description: s.description, spec: specs.get(s.id)! })) };
}

const asChange = (c: SpecChange): FileChange => ({ path: `spec.${c.path}`, before: c.before, after: c.after });

export async function applyStacksFile(opts: { db: Db; actor: UserActor; document: unknown; dryRun: boolean }) {
  const file = parseInput(zStacksFile, opts.document);
  const desired = file.stacks;
  const names = desired.map((d) => d.name);
  if (new Set(names).size !== names.length) throw new AppError("UNPROCESSABLE", "The file names a stack twice.", { reason: "invalid_file" });

  const existing = await opts.db.agentStack.findMany({ where: { name: { in: names } }, select: { id: true, name: true, description: true, version: true, archivedAt: true } });
  const versions = await opts.db.agentStackVersion.findMany({ where: { OR: existing.map((s) => ({ stackId: s.id, version: s.version })) }, select: { stackId: true, spec: true } });
  const plan: (PlanEntry & { stackId: string | null })[] = desired.map((d) => {
    const current = existing.find((s) => s.name === d.name);
    if (!current) return { name: d.name, action: "create", changes: [{ path: "(new stack)", before: null, after: d.name }], version: null, stackId: null };
    const spec = specOf(versions.find((v) => v.stackId === current.id)!.spec);
    const changes = diffStackSpecs(spec, d.spec).changes.map(asChange);
    if (current.description !== d.description) changes.unshift({ path: "description", before: current.description, after: d.description });
    return { name: d.name, action: changes.length > 0 ? "update" : "unchanged", changes, version: current.version, stackId: current.id };
  });

  if (!opts.dryRun) {
    for (const [i, entry] of plan.entries()) {
      const d = desired[i]!;
      if (entry.action === "create") entry.version = (await createStack({ db: opts.db, actor: opts.actor, input: d })).version;
      if (entry.action === "update") entry.version = (await updateStack({ db: opts.db, actor: opts.actor, input: { ...d, stackId: entry.stackId, expectedVersion: entry.version } })).version;
    }
  }
  return { dryRun: opts.dryRun, entries: plan.map(({ stackId: _id, ...e }) => e) };
}
