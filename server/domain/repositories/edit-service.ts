import type { Db, Repository } from "@/server/db";
import { AppError } from "@/server/errors";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";
import { recordAudit } from "../audit";
import { openRunStatuses } from "../runs/lifecycle";
import { auditActorOf, type UserActor } from "../actor";
import { requireAdmin, requireRepositoryRoleOf } from "../access";
import { fieldError, parseInput } from "../input";
import { refusableTransaction } from "../refusable";
import { zRemoveRepositoryInput, zUpdateRepositoryDetailsInput } from "./schemas";
import { changedFields, lockRows, staleVersionError } from "../versioned";

// A repository's own details (default branch, check command, trust tier, visibility) and its
// removal. Who may change what:
// - the default branch: its admins (on the local forge the branch must exist);
// - the check command: Airlock admins only, since it decides what every commit's check proves
//   (the local CI runs it in the agents' sandbox); only local-forge repositories have one;
// - the trust tier and the visibility: Airlock admins only (the tier decides whether the
//   repository's own code may run on a trusted pool).
// Removal (Airlock admins) is refused while a run is queued, running or waiting for approval, or
// an approval is pending or approved and not yet executed. A removed repository keeps its row, its
// runs, approvals, write-backs, deliveries and audit trail (history, seen by Airlock admins); it is
// disabled for good (nothing dispatches, its deliveries are ignored), its memberships end, and the
// local forge's git data stays on disk untouched.

export const DETAIL_FIELDS = ["defaultBranch", "checkCommand", "trustTier", "visibility"] as const satisfies readonly (keyof Repository)[];
const ADMIN_ONLY: Record<(typeof DETAIL_FIELDS)[number], string | null> = {
  defaultBranch: null,
  checkCommand: "Only an Airlock admin changes the check command: it decides what every commit's check proves.",
  trustTier: "Only an Airlock admin changes the trust tier: it decides whether the repository's own code runs on a trusted pool.",
  visibility: "Only an Airlock admin changes the visibility.",
};

export const detailsOf = (repo: Repository) => ({ defaultBranch: repo.defaultBranch, checkCommand: repo.checkCommand, trustTier: repo.trustTier, visibility: repo.visibility });

export const removedProblem = (repo: Pick<Repository, "removedAt" | "fullName">) =>
  repo.removedAt ? `${repo.fullName} was removed on ${repo.removedAt.toISOString().slice(0, 10)}; its history is kept, and nothing about it can change.` : null;

export async function updateRepositoryDetails(opts: { db: Db; actor: UserActor; input: unknown; dataDir: string }) {
  const { repositoryId, expectedVersion, ...values } = parseInput(zUpdateRepositoryDetailsInput, opts.input);
  return refusableTransaction(opts.db, "updateRepositoryDetails", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, repositoryId, "admin", "change the repository's details");
    await lockRows(tx, "Repository", [repositoryId]);
    const repo = (await tx.repository.findUnique({ where: { id: repositoryId } })) ?? refuse(new AppError("NOT_FOUND", "No such repository."));
    const removed = removedProblem(repo);
    if (removed) refuse(new AppError("CONFLICT", removed, { reason: "repository_removed" }));
    if (repo.version !== expectedVersion) {
      refuse(await staleVersionError({ db: tx, objectType: "Repository", objectId: repo.id, what: `The details of ${repo.fullName}`, expectedVersion, currentVersion: repo.version, current: detailsOf(repo) }));
    }
    const before = detailsOf(repo);
    const changes = changedFields(before, values, DETAIL_FIELDS);
    if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${repo.version}.`, { reason: "unchanged" }));
    for (const change of changes) {
      const field = change.path as (typeof DETAIL_FIELDS)[number];
      const adminOnly = ADMIN_ONLY[field];
      if (adminOnly && !opts.actor.isAdmin) refuse(fieldError("FORBIDDEN", field, adminOnly, "admin_only"));
    }
    if (values.checkCommand !== before.checkCommand && values.checkCommand !== null && repo.forge !== "local") {
      refuse(fieldError("UNPROCESSABLE", "checkCommand", `${repo.fullName} is on ${repo.forge}: its checks run there; only local-forge repositories have a check command.`, "not_local"));
    }
    if (values.defaultBranch !== before.defaultBranch && repo.forge === "local") {
      const tip = await resolveRevision(bareRepoPath(opts.dataDir, repo.fullName), values.defaultBranch).catch(() => null);
      if (!tip) refuse(fieldError("UNPROCESSABLE", "defaultBranch", `The local forge has no branch ${values.defaultBranch} in ${repo.fullName}: push it first.`, "no_such_branch"));
    }
    const version = repo.version + 1;
    const updated = await tx.repository.update({ where: { id: repo.id }, data: { ...values, version } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.details.update",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { fromVersion: repo.version, toVersion: version, changes },
    });
    return { id: updated.id, version, ...detailsOf(updated) };
  });
}

/** What removing the repository would leave and refuse on: the dialog says these figures. */
export async function removalFacts(db: Db, repositoryId: string) {
  const [runs, openRuns, liveApprovals, approvals, memberships] = await Promise.all([
    db.agentDispatchRun.count({ where: { repositoryId } }),
    db.agentDispatchRun.count({ where: { repositoryId, status: { in: [...openRunStatuses] } } }),
    db.approvalRequest.count({ where: { run: { repositoryId }, status: { in: ["pending", "approved"] } } }),
    db.approvalRequest.count({ where: { run: { repositoryId } } }),
    db.membership.count({ where: { repositoryId } }),
  ]);
  return { runs, openRuns, approvals, liveApprovals, memberships };
}

export async function removeRepository(opts: { db: Db; actor: UserActor; input: unknown; dataDir: string; now?: Date }) {
  requireAdmin(opts.actor, "remove a repository");
  const input = parseInput(zRemoveRepositoryInput, opts.input);
  const now = opts.now ?? new Date();
  return refusableTransaction(opts.db, "removeRepository", async (tx, refuse) => {
    await lockRows(tx, "Repository", [input.repositoryId]);
    const repo = (await tx.repository.findUnique({ where: { id: input.repositoryId } })) ?? refuse(new AppError("NOT_FOUND", "No such repository."));
    if (repo.removedAt) return { id: repo.id, fullName: repo.fullName, removed: true, changed: false };
    if (input.confirmFullName !== repo.fullName) {
      refuse(fieldError("UNPROCESSABLE", "confirmFullName", `Type ${repo.fullName} exactly to remove it.`, "confirmation_mismatch"));
    }
    const facts = await removalFacts(tx, repo.id);
    if (facts.openRuns > 0 || facts.liveApprovals > 0) {
      const parts = [
        facts.openRuns > 0 ? `${facts.openRuns} run${facts.openRuns === 1 ? " is" : "s are"} queued, running or waiting for approval` : null,
        facts.liveApprovals > 0 ? `${facts.liveApprovals} approval${facts.liveApprovals === 1 ? " is" : "s are"} pending or approved and not yet executed` : null,
      ].filter(Boolean);
      refuse(new AppError("CONFLICT", `${repo.fullName} is not removed: ${parts.join(", and ")}. Cancel or finish them first.`, { reason: "repository_busy", details: facts }));
    }
    const members = await tx.membership.findMany({ where: { repositoryId: repo.id }, select: { userId: true, role: true } });
    await tx.membership.deleteMany({ where: { repositoryId: repo.id } });
    await tx.repository.update({
      where: { id: repo.id },
      data: {
        removedAt: now,
        disabledAt: repo.disabledAt ?? now,
        disabledBy: "admin",
        disabledReason: `removed by ${opts.actor.email}: ${input.reason}`.slice(0, 500),
        version: repo.version + 1,
      },
    });
    const gitData = repo.forge === "local" ? bareRepoPath(opts.dataDir, repo.fullName) : null;
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "repository.remove",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { reason: input.reason, runs: facts.runs, approvals: facts.approvals, members, keptGitData: gitData },
    });
    return { id: repo.id, fullName: repo.fullName, removed: true, changed: true };
  });
}
