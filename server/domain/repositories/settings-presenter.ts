import type { Db } from "@/server/db";
import { pickableRepositoryWhere, repositoryRole, roleAtLeast, visibleRepositoryIds } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import type { UserActor } from "../actor";
import { bareRepoPath } from "@/server/forges/local/repositories";
import { removalFacts, removedProblem } from "./edit-service";
import { runCheckProblem } from "./run-check";
import { policyOf } from "./settings-service";

// What the settings pages show: the repositories a user can see with their role, and one
// repository's policy and members, with whether (and why not) the user may change them.

/** The repositories the pickers offer (run and approval filters, the stack preview), with the user's role on each. */
export async function listPickableRepositories(opts: { db: Db; actor: UserActor }) {
  const repos = await opts.db.repository.findMany({
    where: pickableRepositoryWhere(await visibleRepositoryIds(opts.db, opts.actor)),
    orderBy: { fullName: "asc" },
    select: { id: true, fullName: true, forge: true, memberships: { where: { userId: opts.actor.id }, select: { role: true } } },
  });
  return repos.map(({ memberships, ...r }) => ({ ...r, role: opts.actor.isAdmin ? ("admin" as const) : (memberships[0]?.role ?? "viewer") }));
}

export async function settingsRepositories(opts: { db: Db; actor: UserActor }) {
  const visible = await visibleRepositoryIds(opts.db, opts.actor);
  const repos = await opts.db.repository.findMany({
    where: pickableRepositoryWhere(visible),
    orderBy: { fullName: "asc" },
    select: {
      id: true,
      fullName: true,
      forge: true,
      visibility: true,
      trustTier: true,
      defaultBranch: true,
      disabledAt: true,
      disabledReason: true,
      disabledBy: true,
      autoRunOnFailedCheck: true,
      botCommentsAllowed: true,
      writeBackExceptions: true,
      _count: { select: { memberships: true, triggerRules: true } },
      memberships: { where: { userId: opts.actor.id }, select: { role: true } },
    },
  });
  const last = await lastDeliveries(opts.db, repos.map((r) => r.fullName));
  return repos.map(({ memberships, ...r }) => ({
    ...r,
    role: opts.actor.isAdmin ? ("admin" as const) : (memberships[0]?.role ?? null),
    lastDelivery: last.get(r.fullName.toLowerCase()) ?? null,
  }));
}

/** How far back "last delivery" looks: the deliveries table only grows, and an old one says little. */
const LAST_DELIVERY_DAYS = 30;

/** Each repository's latest delivery (GitHub's or the local forge's) of the last 30 days. */
async function lastDeliveries(db: Db, names: string[]) {
  if (names.length === 0) return new Map<string, { deliveryId: string; event: string; outcome: string; receivedAt: Date }>();
  const rows = await db.$queryRaw<{ name: string; deliveryId: string; event: string; outcome: string; receivedAt: Date }[]>`
    SELECT DISTINCT ON (lower(n.name)) lower(n.name) AS "name", d."deliveryId", d."event", d."outcome"::text AS "outcome", d."receivedAt"
    FROM "WebhookDelivery" d
    CROSS JOIN LATERAL (SELECT COALESCE(d."payload"->'repository'->>'full_name', d."payload"->'ciEvent'->'repository'->>'fullName') AS name) n
    WHERE d."receivedAt" > now() - make_interval(days => ${LAST_DELIVERY_DAYS}) AND lower(n.name) = ANY(${names.map((n) => n.toLowerCase())}::text[])
    ORDER BY lower(n.name), d."receivedAt" DESC`;
  return new Map(rows.map(({ name, ...r }) => [name, r]));
}

export async function repositorySettings(opts: { db: Db; actor: UserActor; repositoryId: string; dataDir: string }) {
  const role = await repositoryRole(opts.db, opts.actor, opts.repositoryId);
  const repo = role === null ? null : await opts.db.repository.findUnique({ where: { id: opts.repositoryId } });
  if (!repo) throw new AppError("NOT_FOUND", "No such repository.", { reason: "no_such_repository" });
  const removed = removedProblem(repo);
  if (removed) throw new AppError("NOT_FOUND", removed, { reason: "repository_removed" });
  const members = await opts.db.membership.findMany({
    where: { repositoryId: repo.id },
    orderBy: [{ role: "desc" }, { createdAt: "asc" }],
    select: { role: true, createdAt: true, user: { select: { id: true, name: true, email: true, isAdmin: true } } },
  });
  const canEdit = roleAtLeast(role, "admin")
    ? { allowed: true as const, reason: null }
    : { allowed: false as const, reason: `Only a repository admin can change these settings; you are ${role}.` };
  const checkProblem = runCheckProblem(repo);
  const runCheck = !roleAtLeast(role, "maintainer")
    ? { allowed: false as const, reason: `Running the check needs the maintainer role; you are ${role}.` }
    : checkProblem
      ? { allowed: false as const, reason: checkProblem }
      : { allowed: true as const, reason: null };
  return {
    id: repo.id,
    fullName: repo.fullName,
    forge: repo.forge,
    defaultBranch: repo.defaultBranch,
    checkCommand: repo.checkCommand,
    runCheck,
    trustTier: repo.trustTier,
    visibility: repo.visibility,
    disabled: repo.disabledAt ? { at: repo.disabledAt, reason: repo.disabledReason, by: repo.disabledBy } : null,
    isAirlockAdmin: opts.actor.isAdmin,
    removal: { ...(await removalFacts(opts.db, repo.id)), gitData: repo.forge === "local" ? bareRepoPath(opts.dataDir, repo.fullName) : null },
    version: repo.version,
    policy: policyOf(repo),
    members: members.map((m) => ({ ...m.user, role: m.role, since: m.createdAt })),
    adminCount: members.filter((m) => m.role === "admin").length,
    role,
    canEdit,
  };
}
