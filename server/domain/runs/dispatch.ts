import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { requireRepositoryEnabled } from "../repositories/disabled";
import { enqueueDispatch } from "./attempts";
import { recordCauser } from "./causers";
import { lockRunOrThrow, queueAttempt, transitionRun } from "./transition";

// "Diagnose with agent" / "Attempt repair": a person dispatches a suggested run. The run becomes
// queued with its first attempt, the audit entry and status events are written, and the
// dispatch job is added, all in one transaction; a worker picks it up through NOTIFY. The
// dispatcher is recorded among the run's causers.

export async function dispatchRun(opts: { db: Db; actor: AuditActor; runId: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "dispatchRun", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    if (run.status !== "suggested") {
      throw new AppError("CONFLICT", `The run is ${run.status.replaceAll("_", " ")}; only a suggestion can be dispatched`, { reason: "cannot_dispatch" });
    }
    await requireRepositoryEnabled(tx, run.repositoryId, "dispatching its runs");
    const reason = `${opts.actor.label} dispatched the suggestion`;
    await transitionRun(tx, { runId: opts.runId, from: "suggested", to: "queued", reason, now });
    const attempt = await queueAttempt(tx, { runId: opts.runId, reason, now });
    // Choosing to run the agent makes the dispatcher a cause of its write-backs (two-person rule).
    await recordCauser(tx, { runId: opts.runId, userId: opts.actor.userId, cause: "dispatched" });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.dispatch",
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: run.repositoryId,
      detail: { from: "suggested", attemptNumber: attempt.number },
    });
    await enqueueDispatch(tx, opts.runId);
    return { runId: opts.runId, status: "queued" as const, attemptNumber: attempt.number };
  });
}
