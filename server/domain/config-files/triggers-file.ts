import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";
import type { UserActor } from "../actor";
import { parseInput } from "../input";
import { zTriggerRuleFields, zTriggerRuleInput } from "../triggers/forms/schemas";
import { createTriggerRule, updateTriggerRule } from "../triggers/rules-service";
import type { FileChange, PlanEntry } from "./stacks-file";

// Trigger rules as a reviewable file: a rule names its repository by full name (absent: every
// repository) and its stack by name, and is matched by (repository, name). Apply plans first
// against the rules as the form would save them, so applying the same file twice saves nothing
// the second time; changes go through the rules service with its permission checks.

const FIELDS = ["kind", "workflow", "job", "step", "branchGlob", "pathFilters", "failureSignature", "taskKind", "action", "alsoFire", "enabled"] as const;
/** Written only for flaky-scan rules (the others never scan). */
const SCAN_FIELDS = ["scanSchedule", "scanWindowHours", "scanThreshold"] as const;

/** A rule in a file: the form's fields, with the repository and stack by name; match keys may be left out. */
export const zFileRule = zTriggerRuleFields
  .omit({ repositoryId: true, stackId: true })
  .partial({ workflow: true, job: true, step: true, branchGlob: true, pathFilters: true, failureSignature: true, alsoFire: true, scanSchedule: true, scanWindowHours: true, scanThreshold: true })
  .extend({ repository: z.string().max(300).nullable().default(null), stack: z.string().max(80) });

export const zTriggersFile = z.object({ triggers: z.array(zFileRule).max(500) });

const pick = <T, K extends keyof T>(o: T, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
const show = (v: unknown) => (v === null || v === undefined ? null : typeof v === "string" ? v : JSON.stringify(v));

export async function exportTriggers(db: Db, actor: UserActor) {
  const visible = await visibleRepositoryIds(db, actor);
  const rules = await db.triggerRule.findMany({
    where: visible === "all" ? {} : { OR: [{ repositoryId: null }, { repositoryId: { in: visible } }] },
    orderBy: [{ name: "asc" }, { id: "asc" }],
    include: { repository: { select: { fullName: true } }, stack: { select: { name: true } } },
  });
  return {
    triggers: rules.map((r) => ({ name: r.name, repository: r.repository?.fullName ?? null, stack: r.stack.name, ...pick(r, FIELDS), ...(r.kind === "flaky_scan" ? pick(r, SCAN_FIELDS) : {}) })),
  };
}

export async function applyTriggersFile(opts: { db: Db; actor: UserActor; document: unknown; dryRun: boolean }) {
  const file = parseInput(zTriggersFile, opts.document);
  const repoNames = [...new Set(file.triggers.flatMap((t) => (t.repository ? [t.repository] : [])))];
  const stackNames = [...new Set(file.triggers.map((t) => t.stack))];
  const [repos, stacks] = await Promise.all([
    opts.db.repository.findMany({ where: { fullName: { in: repoNames } }, select: { id: true, fullName: true } }),
    opts.db.agentStack.findMany({ where: { name: { in: stackNames } }, select: { id: true, name: true } }),
  ]);
  const visible = await visibleRepositoryIds(opts.db, opts.actor);
  const desired = file.triggers.map((t, i) => {
    const repo = t.repository === null ? null : repos.find((r) => r.fullName === t.repository && (visible === "all" || visible.includes(r.id)));
    if (repo === undefined) throw new AppError("UNPROCESSABLE", `triggers[${i}]: no repository ${t.repository} that you can see.`, { reason: "invalid_file" });
    const stack = stacks.find((s) => s.name === t.stack);
    if (!stack) throw new AppError("UNPROCESSABLE", `triggers[${i}]: no stack named ${t.stack}.`, { reason: "invalid_file" });
    const { repository: _r, stack: _s, ...fields } = t;
    const parsed = zTriggerRuleInput.safeParse({ workflow: null, job: null, step: null, branchGlob: null, pathFilters: [], failureSignature: null, scanSchedule: null, scanWindowHours: null, scanThreshold: null, ...fields, repositoryId: repo?.id ?? null, stackId: stack.id });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new AppError("UNPROCESSABLE", `triggers[${i}].${issue.path.join(".")}: ${issue.message}`, { reason: "invalid_file" });
    }
    return { values: parsed.data, label: `${t.repository ?? "(every repository)"}: ${t.name}`, stackName: t.stack };
  });
  const keys = desired.map((d) => d.label);
  if (new Set(keys).size !== keys.length) throw new AppError("UNPROCESSABLE", "The file names a rule twice for one repository.", { reason: "invalid_file" });

  const existing = await opts.db.triggerRule.findMany({
    where: { OR: desired.map((d) => ({ name: d.values.name, repositoryId: d.values.repositoryId })) },
    include: { stack: { select: { name: true } } },
  });
  const plan = desired.map((d) => {
    const current = existing.find((r) => r.name === d.values.name && r.repositoryId === d.values.repositoryId);
    if (!current) return { entry: { name: d.label, action: "create", changes: [{ path: "(new rule)", before: null, after: d.label }], version: null } as PlanEntry, ruleId: null };
    const changes: FileChange[] = [...FIELDS, ...SCAN_FIELDS].filter((f) => show(current[f]) !== show(d.values[f])).map((f) => ({ path: f, before: show(current[f]), after: show(d.values[f]) }));
    if (current.stackId !== d.values.stackId) changes.push({ path: "stack", before: current.stack.name, after: d.stackName });
    return { entry: { name: d.label, action: changes.length > 0 ? "update" : "unchanged", changes, version: current.version } as PlanEntry, ruleId: current.id };
  });

  if (!opts.dryRun) {
    for (const [i, { entry, ruleId }] of plan.entries()) {
      const values = desired[i]!.values;
      if (entry.action === "create") entry.version = (await createTriggerRule({ db: opts.db, actor: opts.actor, input: values })).version;
      if (entry.action === "update") entry.version = (await updateTriggerRule({ db: opts.db, actor: opts.actor, input: { ...values, ruleId, expectedVersion: entry.version } })).version;
    }
  }
  return { dryRun: opts.dryRun, entries: plan.map((p) => p.entry) };
}
