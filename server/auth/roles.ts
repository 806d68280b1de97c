import type { Db, RepoRole } from "@/server/db";

// Roles per repository, ordered: each includes the ones before it.
const rank: Record<RepoRole, number> = { viewer: 1, maintainer: 2, admin: 3 };

export type SessionUser = { id: string; email: string; name: string; isAdmin: boolean };

export const roleAtLeast = (role: RepoRole | null, min: RepoRole) => role !== null && rank[role] >= rank[min];

/** The user's role on a repository: a global admin is admin everywhere. */
export async function repositoryRole(db: Db, user: SessionUser, repositoryId: string): Promise<RepoRole | null> {
  if (user.isAdmin) return "admin";
  const m = await db.membership.findUnique({
    where: { userId_repositoryId: { userId: user.id, repositoryId } },
    select: { role: true },
  });
  return m?.role ?? null;
}

/** Repositories the user can see, or "all" for a global admin. */
export async function visibleRepositoryIds(db: Db, user: SessionUser): Promise<string[] | "all"> {
  if (user.isAdmin) return "all";
  const rows = await db.membership.findMany({ where: { userId: user.id }, select: { repositoryId: true } });
  return rows.map((r) => r.repositoryId);
}
