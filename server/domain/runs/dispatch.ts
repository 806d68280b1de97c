import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import { requireRepositoryEnabled } from "./disabled";
import { enqueueDispatch } from "./attempts";
import type { TaskKind } from "@/server/db/generated/enums";
import { recordCauser } from "./causers";
import { retaskSuggestion } from "./retask";
import { lockRunOrThrow, queueAttempt, transitionRun } from "./transition";

// "Diagnose with agent" / "Attempt repair": a person dispatches a suggested run. The run becomes
// queued with its first attempt, the audit entry and status events are written, and the
// dispatch job is added, all in one transaction; a worker picks it up through NOTIFY. The
// dispatcher is recorded among the run's causers. With `taskKind` ("Attempt repair" on a
// suggested diagnosis), the suggestion is first made a run of that task with the repository's
// stack for it (retask.ts); refused, with the reason, when the repository has none.

export async function dispatchRun(opts: { db: Db; actor: AuditActor; runId: string; taskKind?: TaskKind; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "dispatchRun", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    if (run.status !== "suggested") {
      throw new AppError("CONFLICT", `The run is ${run.status.replaceAll("_", " ")}; only a suggestion can be dispatched`, { reason: "cannot_dispatch" });
    }
    await requireRepositoryEnabled(tx, run.repositoryId, "dispatching its runs");
    const run0 = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: { taskKind: true } });
    const retasked = opts.taskKind && opts.taskKind !== run0.taskKind ? await retaskSuggestion(tx, { runId: opts.runId, taskKind: opts.taskKind }) : null;
    const reason = retasked
      ? `${opts.actor.label} dispatched the suggestion as a ${retasked.to.replace("_", " ")} run with stack ${retasked.stack.name} v${retasked.stack.version} (rule ${JSON.stringify(retasked.rule?.name ?? "")})`
      : `${opts.actor.label} dispatched the suggestion`;
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
      detail: {
        from: "suggested",
        attemptNumber: attempt.number,
        ...(retasked ? { taskKind: { from: retasked.from, to: retasked.to }, stack: retasked.stack, ruleId: retasked.rule?.id ?? null } : {}),
      },
    });
    await enqueueDispatch(tx, opts.runId);
    return { runId: opts.runId, status: "queued" as const, attemptNumber: attempt.number, taskKind: retasked?.to ?? run0.taskKind };
  });
}
