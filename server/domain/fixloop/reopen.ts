import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { type AuditActor, recordAudit } from "../audit";
import { advisoryLock } from "../ingest/evaluate/locks";
import { enqueueLabelFlip, flippedLabels } from "./labels";
import { fixLoopLockKey } from "./spawn";

// "Re-open for agents": the one way back from an escalation. A maintainer (the router checks the
// role) clears the escalation and resets the bound: intents before now no longer count, and the
// labels flip back. Audited; re-opening a branch that is not escalated is refused.

export async function reopenForAgents(opts: { db: Db; actor: AuditActor; repositoryId: string; branch: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "reopenForAgents", async (tx) => {
    await advisoryLock(tx, fixLoopLockKey(opts.repositoryId, opts.branch));
    const key = { repositoryId_branch: { repositoryId: opts.repositoryId, branch: opts.branch } };
    const state = await tx.fixLoopState.findUnique({ where: key });
    if (!state?.escalatedAt) throw new AppError("CONFLICT", `${opts.branch} is not escalated; there is nothing to re-open.`, { reason: "not_escalated" });
    await tx.fixLoopState.update({ where: key, data: { escalatedAt: null, resetAt: now, resetBy: opts.actor.label } });
    if (state.pullRequestId) {
      const repo = await tx.repository.findUniqueOrThrow({ where: { id: opts.repositoryId }, select: { agentReadyLabel: true, humanReadyLabel: true } });
      const pr = await tx.pullRequest.findUnique({ where: { id: state.pullRequestId }, select: { labels: true } });
      if (pr) {
        const flip = { add: [repo.agentReadyLabel], remove: [repo.humanReadyLabel] };
        await tx.pullRequest.update({ where: { id: state.pullRequestId }, data: { labels: flippedLabels(pr.labels, flip), escalatedAt: null } });
        await enqueueLabelFlip(tx, { pullRequestId: state.pullRequestId, ...flip });
      }
    }
    await recordAudit(tx, {
      actor: opts.actor,
      action: "fixloop.reopen",
      objectType: "FixLoopState",
      objectId: state.id,
      repositoryId: opts.repositoryId,
      detail: { branch: opts.branch, escalatedAt: state.escalatedAt.toISOString() },
    });
    return { branch: opts.branch, resetAt: now };
  });
}
