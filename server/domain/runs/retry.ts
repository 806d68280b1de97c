import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { recordAudit, type AuditActor } from "../audit";
import type { RunEventInput } from "../events/catalogue";
import { enqueueDispatch, maxRetriesOf } from "./attempts";
import { recordCauser } from "./causers";
import { canRetryRun } from "./lifecycle";
import { lockRunOrThrow, queueAttempt, transitionAttempt, transitionRun } from "./transition";

// Retry: a new attempt of the same run (failed, cancelled or escalated), within the stack's
// retry bound. The run goes back to queued; the new attempt gets the next fencing token, so
// nothing a previous attempt's worker still sends can land.

export async function retryRun(opts: { db: Db; actor: AuditActor; runId: string; reason?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "retryRun", async (tx) => {
    const run = await lockRunOrThrow(tx, opts.runId);
    const [attempts, snapshot] = await Promise.all([
      tx.dispatchAttempt.count({ where: { runId: opts.runId } }),
      tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: { stackSnapshot: true } }),
    ]);
    const maxRetries = maxRetriesOf(snapshot.stackSnapshot);
    const verdict = canRetryRun(run.status, { attempts, maxRetries });
    if (!verdict.ok) throw new AppError("CONFLICT", verdict.reason, { reason: "cannot_retry" });
    const reason = opts.reason?.trim() || `${opts.actor.label} asked for a new attempt`;
    // An attempt still waiting from before the run ended (a cancel while queued) is closed first.
    const leftovers = await tx.dispatchAttempt.findMany({ where: { runId: opts.runId, status: "queued" }, select: { id: true, number: true, status: true } });
    const events: RunEventInput[] = [];
    for (const a of leftovers) await transitionAttempt(tx, { runId: opts.runId, attempt: a, to: "cancelled", reason: "superseded by a retry", now, events });
    await transitionRun(tx, { runId: opts.runId, from: run.status, to: "queued", reason, now, before: events });
    const attempt = await queueAttempt(tx, { runId: opts.runId, reason: `retry ${attempts} of ${maxRetries}: ${reason}`, now });
    await recordCauser(tx, { runId: opts.runId, userId: opts.actor.userId, cause: "retried" });
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.retry",
      objectType: "AgentDispatchRun",
      objectId: opts.runId,
      repositoryId: run.repositoryId,
      detail: { from: run.status, attemptNumber: attempt.number, reason },
    });
    await enqueueDispatch(tx, opts.runId);
    return { runId: opts.runId, status: "queued" as const, attemptNumber: attempt.number };
  });
}

// ---------------------------------------------------------------- automatic retries

/**
 * How an attempt ended, as far as retrying is concerned. Retried automatically (within the
 * stack's bound): the attempt was lost (its worker died or shut down), hit its wall-clock limit,
 * or its agent could not start for a transient reason (the cluster or the machine was briefly
 * unable: 5xx/429, EAGAIN, EMFILE...). Never retried: the agent itself failed (a non-zero exit
 * is the agent's answer, and would very likely be the same again), it could not start for a
 * lasting reason (command not found, bad stack), admission refused it, or a person cancelled it.
 */
export type AttemptEndCause = "lost" | "timed_out" | "start_failed_transient" | "start_failed" | "agent_failed" | "admission_refused" | "cancelled";

export type RetryVerdict = { retry: true; reason: string } | { retry: false; reason: string };

const retriable: Record<AttemptEndCause, string | null> = {
  lost: null,
  timed_out: null,
  start_failed_transient: null,
  start_failed: "the agent could not start for a reason a retry would not change",
  agent_failed: "the agent itself failed; a retry would very likely fail the same way",
  admission_refused: "admission refused the attempt; only a change of grants, pools or roles can help",
  cancelled: "the attempt was cancelled",
};

/**
 * Whether the run gets a new attempt automatically. Pure. `attempts` counts the run's attempts
 * including the one that just ended, so with maxRetries = 2 the third attempt is the last.
 * Only a run still in flight (queued or running) is retried: a run a person cancelled or that
 * already ended stays as it is.
 */
export function automaticRetry(opts: { cause: AttemptEndCause; runStatus: RunStatus; attempts: number; maxRetries: number }): RetryVerdict {
  const { cause, runStatus, attempts, maxRetries } = opts;
  const refusal = retriable[cause];
  if (refusal) return { retry: false, reason: refusal };
  if (runStatus !== "queued" && runStatus !== "running") return { retry: false, reason: `the run is ${runStatus}` };
  if (attempts > maxRetries) {
    return { retry: false, reason: maxRetries === 0 ? "the stack allows no retries" : `no retry is left (${maxRetries} allowed, all used)` };
  }
  return { retry: true, reason: `retry ${attempts} of ${maxRetries}` };
}
