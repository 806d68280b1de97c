import type { Db } from "@/server/db";
import type { TaskKind } from "@/server/db/generated/enums";
import { TASK_KINDS } from "@/server/domain/ci-events/enums";

// The repository's stack for each task kind when a person asks for one: its `manual` trigger
// rules (/triggers, kind "Manual"). An enabled rule of the repository wins over one for every
// repository, then the older rule, as precedence decides between competing rules; a rule whose
// stack is archived gives no stack. "Attempt repair" dispatches a suggestion with the repair
// stack, and the manual dispatch dialog preselects these. With none, the reason says what to add.

export type TaskStack =
  | { taskKind: TaskKind; stack: { id: string; name: string; version: number }; rule: { id: string; name: string; scope: "repository" | "global" }; reason: null }
  | { taskKind: TaskKind; stack: null; rule: null; reason: string };

export async function taskStacks(db: Db, repositoryId: string): Promise<Record<TaskKind, TaskStack>> {
  const rules = await db.triggerRule.findMany({
    where: { kind: "manual", enabled: true, OR: [{ repositoryId }, { repositoryId: null }] },
    select: { id: true, name: true, taskKind: true, repositoryId: true, createdAt: true, stack: { select: { id: true, name: true, version: true, archivedAt: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const entries = TASK_KINDS.map((taskKind): [TaskKind, TaskStack] => {
    const mine = rules.filter((r) => r.taskKind === taskKind);
    const rule = mine.find((r) => r.repositoryId === repositoryId) ?? mine[0];
    const words = taskKind.replace("_", " ");
    if (!rule) {
      return [taskKind, { taskKind, stack: null, rule: null, reason: `No ${words} stack: this repository has no enabled manual trigger rule for ${words} tasks (add one on Triggers)` }];
    }
    if (rule.stack.archivedAt) {
      return [taskKind, { taskKind, stack: null, rule: null, reason: `No ${words} stack: rule ${JSON.stringify(rule.name)} uses stack ${rule.stack.name}, which is archived` }];
    }
    return [
      taskKind,
      {
        taskKind,
        stack: { id: rule.stack.id, name: rule.stack.name, version: rule.stack.version },
        rule: { id: rule.id, name: rule.name, scope: rule.repositoryId === null ? "global" : "repository" },
        reason: null,
      },
    ];
  });
  return Object.fromEntries(entries) as Record<TaskKind, TaskStack>;
}
