import type { Db, Repository } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { recordAudit } from "../audit";
import { requireRepositoryRoleOf } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { parseInput } from "../input";
import { disabledProblem } from "../runs/disabled";
import { lockRows } from "../versioned";
import { zRunCheckInput } from "./schemas";

// "Run check": a maintainer asks the local CI to run a repository's check on a branch (its tip),
// as a push would. The worker's `ci.run` job does the run; a failure goes through the same
// ingest and trigger path as any other. The request id makes a retried or double-clicked request
// queue one run: the first request's audit entry is found under the repository's row lock.

/** Why the local CI cannot run this repository's check, or null. */
export function runCheckProblem(repo: Pick<Repository, "forge" | "checkCommand" | "fullName" | "disabledAt" | "disabledReason" | "disabledBy">): string | null {
  const disabled = disabledProblem(repo, "running its check");
  if (disabled) return disabled;
  if (repo.forge !== "local") return `${repo.fullName} is on ${repo.forge}: its checks run there, not in the local CI.`;
  if (!repo.checkCommand) return `${repo.fullName} has no check command for the local CI.`;
  return null;
}

export async function requestCheckRun(opts: { db: Db; actor: UserActor; repositoryId: string; input: unknown }) {
  const input = parseInput(zRunCheckInput, opts.input);
  await requireRepositoryRoleOf(opts.db, opts.actor, opts.repositoryId, "maintainer", "run its check");
  return transaction(opts.db, "requestCheckRun", async (tx) => {
    await lockRows(tx, "Repository", [opts.repositoryId]);
    const repo = await tx.repository.findUnique({ where: { id: opts.repositoryId } });
    if (!repo) throw new AppError("NOT_FOUND", "No such repository.", { reason: "no_such_repository" });
    const [earlier] = await tx.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "AuditEntry"
      WHERE "objectType" = 'Repository' AND "objectId" = ${repo.id} AND "action" = 'repository.run_check'
        AND "detail"->>'requestId' = ${input.requestId}
      LIMIT 1`;
    const branch = input.branch || repo.defaultBranch;
    if (earlier) return { repositoryId: repo.id, branch, queued: false };
    const problem = runCheckProblem(repo);
    if (problem) throw new AppError("CONFLICT", problem, { reason: repo.disabledAt ? "repository_disabled" : "cannot_run_check" });
    // Queued in the same transaction as the audit entry: both or neither.
    await enqueue(tx, "ci.run", { repositoryId: repo.id, branch }, { jobKey: `check:${input.requestId}`, maxAttempts: 1 });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.run_check",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { requestId: input.requestId, branch },
    });
    return { repositoryId: repo.id, branch, queued: true };
  });
}
