import type { Db } from "@/server/db";
import type { RepoRole } from "@/server/db/generated/enums";
import { roleAtLeast } from "@/server/auth/roles";
import { disabledProblem } from "./disabled";
import { listStackOptions } from "../stacks/stacks-presenter";
import { taskStacks } from "../triggers/task-stacks";
import { INSTRUCTIONS_HEADING } from "../context/prompt-variables";

// What a person may dispatch on a repository, for "Attempt repair" and the manual dispatch
// dialog: the repository's stack per task kind (its manual trigger rules), the stacks to choose
// from, and, when this person may not dispatch at all, why (role, a disabled repository). The
// dispatch use cases check the same facts again; this only says them first.

export async function getDispatchOptions(opts: { db: Db; repositoryId: string; role: RepoRole }) {
  const [repository, stacks, byTask] = await Promise.all([
    opts.db.repository.findUniqueOrThrow({ where: { id: opts.repositoryId }, select: { id: true, fullName: true, defaultBranch: true, disabledAt: true, disabledReason: true, disabledBy: true } }),
    listStackOptions(opts.db),
    taskStacks(opts.db, opts.repositoryId),
  ]);
  // The same sentence dispatching refuses with (runs/dispatch.ts).
  const refusal = !roleAtLeast(opts.role, "maintainer")
    ? `This needs the maintainer role on the repository; you are ${opts.role}`
    : disabledProblem(repository, "dispatching its runs");
  return {
    repository: { id: repository.id, fullName: repository.fullName, defaultBranch: repository.defaultBranch },
    role: opts.role,
    refusal,
    stacks,
    taskStacks: Object.values(byTask),
    // What the prompt puts above a manual dispatch's instructions (the dialog shows the block).
    instructionsHeading: INSTRUCTIONS_HEADING,
  };
}
