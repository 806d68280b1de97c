import type { Db, RepoRole } from "@/server/db";

// Roles per repository, ordered: each includes the ones before it.
const rank: Record<RepoRole, number> = { viewer: 1, maintainer: 2, admin: 3 };

/**
 * What an API token allows (server/auth/api-tokens.ts): the repositories it names, at most its
 * role there, and never more than its owner's own role. A token is never an Airlock admin (its
 * principal has `isAdmin: false`); `ownerIsAdmin` only gives the owner's admin role on the
 * repositories the token names.
 */
export type TokenScope = { tokenId: string; kind: "personal" | "service"; name: string; role: RepoRole; repositoryIds: string[]; ownerIsAdmin: boolean };

export type SessionUser = { id: string; email: string; name: string; isAdmin: boolean; apiToken?: TokenScope };
/** What a role check reads of a user (the actor types of server/domain/actor.ts have it). */
type RoleSubject = Pick<SessionUser, "id" | "isAdmin" | "apiToken">;

export const roleAtLeast = (role: RepoRole | null, min: RepoRole) => role !== null && rank[role] >= rank[min];

const lowerRole = (a: RepoRole | null, b: RepoRole): RepoRole | null => (a === null ? null : rank[a] <= rank[b] ? a : b);

/** The user's role on a repository: a global admin is admin everywhere; a token caps it. */
export async function repositoryRole(db: Db, user: RoleSubject, repositoryId: string): Promise<RepoRole | null> {
  const token = user.apiToken;
  if (token && !token.repositoryIds.includes(repositoryId)) return null;
  const own = user.isAdmin || token?.ownerIsAdmin ? "admin" : await membershipRole(db, user.id, repositoryId);
  return token ? lowerRole(own, token.role) : own;
}

async function membershipRole(db: Db, userId: string, repositoryId: string): Promise<RepoRole | null> {
  const m = await db.membership.findUnique({ where: { userId_repositoryId: { userId, repositoryId } }, select: { role: true } });
  return m?.role ?? null;
}

/** The user's repositories with their roles (capped by a token), or "all" for a global admin. */
export async function repositoryRoles(db: Db, user: RoleSubject): Promise<{ repositoryId: string; role: RepoRole }[] | "all"> {
  if (user.isAdmin) return "all";
  const token = user.apiToken;
  const rows = token?.ownerIsAdmin
    ? (await db.repository.findMany({ where: { id: { in: token.repositoryIds } }, select: { id: true } })).map((r) => ({ repositoryId: r.id, role: "admin" as RepoRole }))
    : await db.membership.findMany({ where: { userId: user.id, ...(token ? { repositoryId: { in: token.repositoryIds } } : {}) }, select: { repositoryId: true, role: true } });
  return token ? rows.map((r) => ({ repositoryId: r.repositoryId, role: lowerRole(r.role, token.role)! })) : rows;
}

/** Repositories the user can see, or "all" for a global admin. */
export async function visibleRepositoryIds(db: Db, user: RoleSubject): Promise<string[] | "all"> {
  const roles = await repositoryRoles(db, user);
  return roles === "all" ? "all" : roles.map((r) => r.repositoryId);
}

/**
 * The repositories a picker offers (filters, forms, settings): the visible ones not removed. A
 * removed repository's history stays readable where it is shown; nothing new is aimed at it.
 */
export const pickableRepositoryWhere = (visible: string[] | "all") => (visible === "all" ? { removedAt: null } : { id: { in: visible }, removedAt: null });
