import type { Db } from "@/server/db";
import { pickableRepositoryWhere, repositoryRole, roleAtLeast, visibleRepositoryIds } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import { repositoriesWithRole } from "../access";
import type { UserActor } from "../actor";
import type { ScanGroup } from "./flaky-scan";

// What the triggers pages show: the rules a user can see (their repositories' and the global
// ones), whether they may change each, and the choices the form offers.

export type RuleRight = { allowed: true; reason: null } | { allowed: false; reason: string };

async function ruleRight(db: Db, actor: UserActor, repositoryId: string | null): Promise<RuleRight> {
  if (actor.isAdmin) return { allowed: true, reason: null };
  if (repositoryId === null) return { allowed: false, reason: "Only an Airlock admin can change a rule for every repository." };
  const role = await repositoryRole(db, actor, repositoryId);
  return roleAtLeast(role, "maintainer")
    ? { allowed: true, reason: null }
    : { allowed: false, reason: `Changing this rule needs the maintainer role on its repository; you are ${role ?? "not a member"}.` };
}

const ruleInclude = {
  stack: { select: { id: true, name: true, archivedAt: true } },
  repository: { select: { id: true, fullName: true } },
  _count: { select: { runs: true } },
} as const;

export async function listTriggerRules(opts: { db: Db; actor: UserActor }) {
  const visible = await visibleRepositoryIds(opts.db, opts.actor);
  const rules = await opts.db.triggerRule.findMany({
    where: visible === "all" ? {} : { OR: [{ repositoryId: null }, { repositoryId: { in: visible } }] },
    orderBy: [{ kind: "asc" }, { name: "asc" }, { id: "asc" }],
    include: ruleInclude,
  });
  const maintained = await repositoriesWithRole(opts.db, opts.actor, "maintainer");
  return {
    rules: rules.map((r) => ({
      ...r,
      canEdit: maintained === "all" || (r.repositoryId !== null && maintained.includes(r.repositoryId)),
    })),
    canCreate: maintained === "all" || maintained.length > 0,
  };
}

export async function getTriggerRule(opts: { db: Db; actor: UserActor; ruleId: string }) {
  const rule = await opts.db.triggerRule.findUnique({ where: { id: opts.ruleId }, include: ruleInclude });
  if (!rule) throw new AppError("NOT_FOUND", "No such trigger rule.", { reason: "no_such_rule" });
  if (rule.repositoryId !== null && !opts.actor.isAdmin) {
    const role = await repositoryRole(opts.db, opts.actor, rule.repositoryId);
    if (role === null) throw new AppError("NOT_FOUND", "No such trigger rule.", { reason: "no_such_rule" });
  }
  return { rule, canEdit: await ruleRight(opts.db, opts.actor, rule.repositoryId) };
}

/** The repositories and stacks the form offers; repositories say whether the user may pick them. */
export async function getTriggerFormOptions(opts: { db: Db; actor: UserActor }) {
  const visible = await visibleRepositoryIds(opts.db, opts.actor);
  const [repositories, stacks] = await Promise.all([
    opts.db.repository.findMany({
      where: pickableRepositoryWhere(visible),
      orderBy: { fullName: "asc" },
      select: { id: true, fullName: true, autoRunOnFailedCheck: true, memberships: { where: { userId: opts.actor.id }, select: { role: true } } },
    }),
    opts.db.agentStack.findMany({ where: { archivedAt: null }, orderBy: { name: "asc" }, select: { id: true, name: true, version: true } }),
  ]);
  return {
    repositories: repositories.map(({ memberships, ...r }) => {
      const role = opts.actor.isAdmin ? "admin" : (memberships[0]?.role ?? null);
      return { ...r, role, canManage: roleAtLeast(role, "maintainer") };
    }),
    stacks,
    canManageGlobal: opts.actor.isAdmin,
  };
}

/**
 * A flaky-scan rule's recent scans, newest first. A rule for every repository scans all of
 * them: each scan shows only the groups of repositories the viewer has a role on (a failure
 * signature and its test names are that repository's code).
 */
export async function listFlakyScans(opts: { db: Db; actor: UserActor; ruleId: string; limit: number }) {
  const { rule } = await getTriggerRule(opts);
  const visible = await visibleRepositoryIds(opts.db, opts.actor);
  const names = visible === "all" ? null : new Set((await opts.db.repository.findMany({ where: { id: { in: visible } }, select: { fullName: true } })).map((r) => r.fullName));
  const scans = await opts.db.flakyScan.findMany({ where: { ruleId: rule.id }, orderBy: { at: "desc" }, take: opts.limit });
  return scans.map((s) => {
    const groups = (s.groups as ScanGroup[]).filter((g) => names === null || names.has(g.repository));
    return { id: s.id, at: s.at, windowFrom: s.windowFrom, requestedBy: s.requestedBy, groups };
  });
}
