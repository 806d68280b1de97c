import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { createPendingWriteBack } from "../approvals/request-write-back";
import { transitionApproval } from "../approvals/transition";
import { type AuditActor, recordAudit } from "../audit";
import { appendRunEvents } from "../events/append";
import { advisoryLock } from "@/server/db/advisory-lock";
import { reopenFlip } from "./labels";
import { fixLoopLockKey } from "./spawn";

// "Re-open for agents": the one way back from an escalation. A maintainer (the router checks the
// role) clears the escalation and resets the bound: intents before now no longer count, and the
// labels flip back. Audited; re-opening a branch that is not escalated is refused.
//
// The flip back is a set_labels write-back recorded as this person's own action (approvedBy =
// them), not sent through the change gate: the gate exists to put a person's judgement between
// an agent and the forge, and here the person is the one acting, with the maintainer role the
// gate would ask for and an audit entry. It still runs through the one write-back executor, so
// it reaches the forge after commit, idempotently, recorded with its outcome like any other.
// An escalation flip still waiting for approval is withdrawn (expired): approving it later would
// hand the re-opened PR back to a person.

async function withdrawPendingFlips(tx: Tx, opts: { repositoryId: string; prNumber: number; actor: AuditActor; now: Date }) {
  const pending = await tx.approvalRequest.findMany({
    where: { action: "set_labels", status: "pending", targetPrNumber: opts.prNumber, run: { repositoryId: opts.repositoryId } },
    select: { id: true, runId: true, status: true },
  });
  for (const a of pending) {
    // Guarded on pending: a flip decided meanwhile is left as it is. The run settles in the
    // approval.decided job the transition enqueues.
    await transitionApproval(tx, {
      approval: a,
      to: "expired",
      data: { decidedAt: opts.now, decidedById: opts.actor.userId, reason: `withdrawn: ${opts.actor.label} re-opened the pull request for agents` },
      events: [{ type: "log", payload: { stream: "system", text: `label flip ${a.id} withdrawn: ${opts.actor.label} re-opened #${opts.prNumber} for agents` } }],
    });
  }
  return pending.map((a) => a.id);
}

export async function reopenForAgents(opts: { db: Db; actor: AuditActor; repositoryId: string; branch: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "reopenForAgents", async (tx) => {
    await advisoryLock(tx, fixLoopLockKey(opts.repositoryId, opts.branch));
    const key = { repositoryId_branch: { repositoryId: opts.repositoryId, branch: opts.branch } };
    const state = await tx.fixLoopState.findUnique({ where: key });
    if (!state?.escalatedAt) throw new AppError("CONFLICT", `${opts.branch} is not escalated; there is nothing to re-open.`, { reason: "not_escalated" });
    await tx.fixLoopState.update({ where: key, data: { escalatedAt: null, resetAt: now, resetBy: opts.actor.label } });
    let flip: { writeBackId: string; withdrawn: string[] } | null = null;
    if (state.pullRequestId) {
      const repo = await tx.repository.findUniqueOrThrow({ where: { id: opts.repositoryId }, select: { fullName: true, agentReadyLabel: true, humanReadyLabel: true } });
      const pr = await tx.pullRequest.findUnique({ where: { id: state.pullRequestId }, select: { number: true } });
      // The write-back belongs to the run the escalation handed over (its provenance).
      const escalation = await tx.fixSpawnIntent.findFirst({
        where: { repositoryId: opts.repositoryId, branch: opts.branch, kind: "escalate", outcome: "launched", parentRunId: { not: null } },
        orderBy: { createdAt: "desc" },
        select: { parentRunId: true },
      });
      const run = escalation?.parentRunId
        ? await tx.agentDispatchRun.findUnique({ where: { id: escalation.parentRunId }, select: { id: true, actor: true, triggerRuleId: true, stackDigest: true, contextDigest: true, promptHash: true } })
        : null;
      if (pr) {
        await tx.pullRequest.update({ where: { id: state.pullRequestId }, data: { escalatedAt: null } });
        const withdrawn = await withdrawPendingFlips(tx, { repositoryId: opts.repositoryId, prNumber: pr.number, actor: opts.actor, now });
        if (run) {
          const wb = await createPendingWriteBack(tx, {
            run,
            kind: "set_labels",
            approvedBy: opts.actor.label,
            target: { repository: repo.fullName, branch: opts.branch, prNumber: pr.number, message: null, labels: reopenFlip(repo), byPerson: opts.actor.label },
            now,
          });
          await appendRunEvents({ db: tx, runId: run.id, events: [{ type: "write_back_requested", payload: { action: "set_labels", target: { branch: opts.branch, prNumber: pr.number } } }] });
          flip = { writeBackId: wb.id, withdrawn };
        }
      }
    }
    await recordAudit(tx, {
      actor: opts.actor,
      action: "fixloop.reopen",
      objectType: "FixLoopState",
      objectId: state.id,
      repositoryId: opts.repositoryId,
      detail: { branch: opts.branch, escalatedAt: state.escalatedAt.toISOString(), labelWriteBackId: flip?.writeBackId ?? null, withdrawnApprovals: flip?.withdrawn ?? [] },
    });
    return { branch: opts.branch, resetAt: now, labelWriteBackId: flip?.writeBackId ?? null };
  });
}
