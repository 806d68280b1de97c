import type { Db } from "@/server/db";
import type { RepoRole } from "@/server/db/generated/enums";
import { stackOptions } from "../stacks/stacks-presenter";
import { taskStacks } from "../triggers/task-stacks";

// What a person may dispatch on a repository, for "Attempt repair" and the manual dispatch
// dialog: the repository's stack per task kind (its manual trigger rules), the stacks to choose
// from, and, when this person may not dispatch at all, why (role, a disabled repository). The
// dispatch use cases check the same facts again; this only says them first.

const rank: Record<RepoRole, number> = { viewer: 1, maintainer: 2, admin: 3 };

export async function dispatchOptions(opts: { db: Db; repositoryId: string; role: RepoRole }) {
  const [repository, stacks, byTask] = await Promise.all([
    opts.db.repository.findUniqueOrThrow({ where: { id: opts.repositoryId }, select: { id: true, fullName: true, defaultBranch: true, disabledAt: true, disabledReason: true } }),
    stackOptions(opts.db),
    taskStacks(opts.db, opts.repositoryId),
  ]);
  const refusal =
    rank[opts.role] < rank.maintainer
      ? `This needs the maintainer role on the repository; you are ${opts.role}`
      : repository.disabledAt
        ? disabledRefusal(repository.disabledReason)
        : null;
  return {
    repository: { id: repository.id, fullName: repository.fullName, defaultBranch: repository.defaultBranch },
    role: opts.role,
    refusal,
    stacks,
    taskStacks: Object.values(byTask),
  };
}

export const disabledRefusal = (reason: string | null) => `The repository is disabled${reason ? ` (${reason})` : ""}: nothing dispatches on it`;
