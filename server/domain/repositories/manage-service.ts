import type { Db } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireRepositoryRoleOf } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { removedProblem } from "./edit-service";
import { parseInput } from "../input";
import { refusableTransaction } from "../refusable";
import { zSetRepositoryEnabledInput } from "./schemas";
import { lockRows } from "../versioned";

// A repository's admins disable and enable it. Disabled by a person, it stays disabled whatever
// the GitHub App's installation events say (they enable again only what they disabled), until a
// person enables it. Enabling a repository the installation disabled (removed from the app) is
// refused: the installation must include it again first, or Airlock would act without access.

export async function setRepositoryEnabled(opts: { db: Db; actor: UserActor; input: unknown; now?: Date }) {
  const input = parseInput(zSetRepositoryEnabledInput, opts.input);
  const now = opts.now ?? new Date();
  return refusableTransaction(opts.db, "setRepositoryEnabled", async (tx, refuse) => {
    await requireRepositoryRoleOf(tx, opts.actor, input.repositoryId, "admin", input.enabled ? "enable the repository" : "disable the repository");
    await lockRows(tx, "Repository", [input.repositoryId]);
    const repo = (await tx.repository.findUnique({ where: { id: input.repositoryId } })) ?? refuse(new AppError("NOT_FOUND", "No such repository."));
    const removed = removedProblem(repo);
    if (removed) refuse(new AppError("CONFLICT", removed, { reason: "repository_removed" }));
    const disabled = repo.disabledAt !== null;
    if (input.enabled === !disabled) {
      return { id: repo.id, fullName: repo.fullName, disabled, changed: false };
    }
    if (input.enabled && repo.disabledBy === "installation") {
      refuse(
        new AppError("CONFLICT", `${repo.fullName} was disabled by the GitHub App's installation (${repo.disabledReason ?? "no reason"}): add it to the installation again on GitHub and it is enabled.`, {
          reason: "disabled_by_installation",
        }),
      );
    }
    if (!input.enabled && input.reason === "") {
      refuse(new AppError("UNPROCESSABLE", "Say why it is disabled.", { reason: "invalid_input", details: { fieldErrors: { reason: ["Required to disable"] } } }));
    }
    await tx.repository.update({
      where: { id: repo.id },
      data: input.enabled
        ? { disabledAt: null, disabledReason: null, disabledBy: null, version: repo.version + 1 }
        : { disabledAt: now, disabledReason: input.reason, disabledBy: "admin", version: repo.version + 1 },
    });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: input.enabled ? "repository.enable" : "repository.disable",
      objectType: "Repository",
      objectId: repo.id,
      repositoryId: repo.id,
      detail: input.enabled ? { previousReason: repo.disabledReason } : { reason: input.reason },
    });
    return { id: repo.id, fullName: repo.fullName, disabled: !input.enabled, changed: true };
  });
}
