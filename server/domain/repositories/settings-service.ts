import type { Db, Repository } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireRepositoryRoleOf } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { parseInput } from "../input";
import { refusableTransaction } from "../refusable";
import { zUpdateRepositoryPolicyInput, type RepositoryPolicy } from "./schemas";
import { changedFields, lockRows, staleVersionError } from "../versioned";

// A repository's policy, changed by its admins (or an Airlock admin): auto-run on failed checks,
// bot comments, the two-person rule, write-back exceptions, the bot handle, the dispatch label,
// the fix-attempt bound, the daily cost cap and the two labels the fix-forward loop's escalation flips. One audit entry records the changed fields; every write-back exception
// granted or revoked gets its own entry as well, since each widens or narrows what runs unattended.

export const POLICY_FIELDS = [
  "autoRunOnFailedCheck",
  "botCommentsAllowed",
  "twoPersonRule",
  "writeBackExceptions",
  "botHandle",
  "dispatchLabel",
  "maxFixAttempts",
  "dailyCostCapUsd",
  "agentReadyLabel",
  "humanReadyLabel",
  "rollBackMode",
] as const satisfies readonly (keyof RepositoryPolicy & keyof Repository)[];

export const policyOf = (repo: Repository): RepositoryPolicy =>
  Object.fromEntries(
    POLICY_FIELDS.map((f) => [f, f === "dailyCostCapUsd" ? (repo.dailyCostCapUsd === null ? null : Number(repo.dailyCostCapUsd)) : repo[f]]),
  ) as RepositoryPolicy;

export async function updateRepositoryPolicy(opts: { db: Db; actor: UserActor; input: unknown }) {
  const { repositoryId, expectedVersion, ...values } = parseInput(zUpdateRepositoryPolicyInput, opts.input);
  return refusableTransaction(opts.db, "updateRepositoryPolicy", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, repositoryId, "admin", "change the repository's settings");
    await lockRows(tx, "Repository", [repositoryId]);
    const repo = (await tx.repository.findUnique({ where: { id: repositoryId } })) ?? refuse(new AppError("NOT_FOUND", "No such repository."));
    if (repo.version !== expectedVersion) {
      refuse(
        await staleVersionError({
          db: tx,
          objectType: "Repository",
          objectId: repo.id,
          what: `The settings of ${repo.fullName}`,
          expectedVersion,
          currentVersion: repo.version,
          current: policyOf(repo),
        }),
      );
    }
    const before = policyOf(repo);
    const changes = changedFields(before, values, POLICY_FIELDS);
    if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${repo.version}.`, { reason: "unchanged" }));
    const version = repo.version + 1;
    const updated = await tx.repository.update({ where: { id: repo.id }, data: { ...values, version } });
    const actor = auditActorOf(opts.actor);
    await recordAudit(tx, {
      actor,
      action: "repository.settings.update",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: { fromVersion: repo.version, toVersion: version, changes },
    });
    const granted = values.writeBackExceptions.filter((k) => !before.writeBackExceptions.includes(k));
    const revoked = before.writeBackExceptions.filter((k) => !values.writeBackExceptions.includes(k));
    for (const [action, kinds] of [
      ["repository.write_back_exception.grant", granted],
      ["repository.write_back_exception.revoke", revoked],
    ] as const) {
      for (const kind of kinds) {
        await recordAudit(tx, { actor, action, objectType: "Repository", objectId: repo.id, repositoryId: repo.id, detail: { kind, version } });
      }
    }
    // Dollars as a number, as the form holds them (a Prisma Decimal does not cross the API).
    return { ...updated, dailyCostCapUsd: updated.dailyCostCapUsd === null ? null : Number(updated.dailyCostCapUsd) };
  });
}
