import type { Db, Repository } from "@/server/db";
import { AppError } from "@/server/errors";

// A disabled repository (by an admin, or by the GitHub App's installation events) dispatches
// nothing: its deliveries are ignored (evaluation/load.ts), and a person's dispatch, retry,
// resume or fork, and the local CI's "Run check", are refused with this reason.

type DisabledFields = Pick<Repository, "fullName" | "disabledAt" | "disabledReason" | "disabledBy"> & { removedAt?: Date | null };

/** Why nothing may dispatch for this repository, or null when it is enabled. */
export function disabledProblem(repo: DisabledFields, what: string): string | null {
  if (!repo.disabledAt) return null;
  if (repo.removedAt) return `${repo.fullName} was removed (${repo.disabledReason ?? "by an admin"}), so ${what} is refused.`;
  const by = repo.disabledBy === "admin" ? "by an admin" : repo.disabledBy === "installation" ? "by the GitHub App's installation" : null;
  const why = [by, repo.disabledReason].filter(Boolean).join(": ");
  return `${repo.fullName} is disabled${why ? ` (${why})` : ""}, so ${what} is refused. A repository admin can enable it again on its settings page (Settings → Repositories).`;
}

export function refuseIfDisabled(repo: DisabledFields, what: string): void {
  const problem = disabledProblem(repo, what);
  if (problem) throw new AppError("CONFLICT", problem, { reason: "repository_disabled" });
}

/** Reads the repository (inside the caller's transaction) and refuses when it is disabled. */
export async function requireRepositoryEnabled(db: Db, repositoryId: string, what: string): Promise<void> {
  const repo = await db.repository.findUnique({ where: { id: repositoryId }, select: { fullName: true, disabledAt: true, disabledReason: true, disabledBy: true, removedAt: true } });
  if (repo) refuseIfDisabled(repo, what);
}
