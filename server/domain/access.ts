import type { Db, RepoRole } from "@/server/db";
import { repositoryRole, repositoryRoles, roleAtLeast } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import type { UserActor } from "./actor";

// Permission checks the configuration services run inside their own transactions, where the
// answer depends on stored data (the repository a rule belongs to, the rules using a stack). The
// routers check the simple cases first; these keep the domain safe when called from elsewhere.

export function requireAdmin(actor: UserActor, what: string): void {
  if (!actor.isAdmin) {
    throw new AppError("FORBIDDEN", `Only an Airlock admin can ${what}.`, { reason: "admin_only" });
  }
}

export async function requireRepositoryRoleOf(db: Db, actor: UserActor, repositoryId: string, min: RepoRole, what: string) {
  const role = await repositoryRole(db, actor, repositoryId);
  if (!roleAtLeast(role, min)) {
    throw new AppError(
      "FORBIDDEN",
      role === null
        ? `You have no role on this repository, so you cannot ${what}.`
        : `To ${what} you need the ${min} role on the repository; you are ${role}.`,
      { reason: "repository_role", details: { required: min, role } },
    );
  }
  return role as RepoRole;
}

/** Repositories where the actor is at least `min` ("all" for a global admin). */
export async function repositoriesWithRole(db: Db, actor: UserActor, min: RepoRole): Promise<string[] | "all"> {
  const rows = await repositoryRoles(db, actor);
  if (rows === "all") return "all";
  return rows.filter((r) => roleAtLeast(r.role, min)).map((r) => r.repositoryId);
}
