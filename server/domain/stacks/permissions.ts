import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";
import { repositoriesWithRole } from "../access";
import type { UserActor } from "../actor";

// Who may change a stack. Stacks are global (one stack serves many repositories), so the rule
// follows what an edit can affect:
// - everyone signed in reads stacks, their versions and diffs, and previews them on repositories
//   they can see;
// - a global admin creates, edits, clones, archives and restores any stack;
// - a maintainer (of at least one repository) creates and clones stacks, and edits or archives a
//   stack when every trigger rule that uses it belongs to a repository they maintain: an unused
//   stack, or one only their repositories use. A stack used by a rule for every repository
//   (no repository set), or by another repository's rule, is the admins' to change;
// - viewers see read-only forms.
// Runs keep the snapshot they were created with, so no edit rewrites a run's history.

export type EditRight = { allowed: true; reason: null } | { allowed: false; reason: string };

const allowed: EditRight = { allowed: true, reason: null };
const refused = (reason: string): EditRight => ({ allowed: false, reason });

export async function stackCreateRight(db: Db, actor: UserActor): Promise<EditRight> {
  if (actor.isAdmin) return allowed;
  const maintained = await repositoriesWithRole(db, actor, "maintainer");
  return maintained.length > 0 ? allowed : refused("Creating a stack needs the maintainer role on at least one repository.");
}

export async function stackEditRight(db: Db, actor: UserActor, stackId: string): Promise<EditRight> {
  if (actor.isAdmin) return allowed;
  const maintained = await repositoriesWithRole(db, actor, "maintainer");
  if (maintained === "all") return allowed;
  if (maintained.length === 0) return refused("Editing a stack needs the maintainer role on a repository that uses it.");
  const rules = await db.triggerRule.findMany({
    where: { stackId },
    select: { name: true, repositoryId: true, repository: { select: { fullName: true } } },
    orderBy: { name: "asc" },
  });
  const global = rules.filter((r) => r.repositoryId === null);
  if (global.length > 0) {
    return refused(
      `Only an Airlock admin can change this stack: rule ${global.map((r) => JSON.stringify(r.name)).join(", ")} uses it for every repository.`,
    );
  }
  const others = [...new Set(rules.filter((r) => !maintained.includes(r.repositoryId ?? "")).map((r) => r.repository?.fullName ?? "?"))];
  if (others.length > 0) {
    return refused(`Only an Airlock admin can change this stack: ${others.join(", ")} also use it, and you do not maintain them.`);
  }
  return allowed;
}

export function assertRight(right: EditRight): void {
  if (!right.allowed) throw new AppError("FORBIDDEN", right.reason, { reason: "stack_permission" });
}
