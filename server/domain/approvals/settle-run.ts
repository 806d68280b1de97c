import type { Tx } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import { canTransitionRun } from "../runs/lifecycle";
import { lockRun, transitionRun } from "../runs/transition";

// A run awaiting approval moves on once nothing is left open: no pending or approved-but-not-
// executed approval and no pending write-back. Then (lifecycle's table): a failed write-back ->
// failed; nothing executed and something rejected or expired -> escalated; else -> succeeded.
// Runs as the reaction to an `approval.decided` job (queue/tasks/settle-run.ts); idempotent: a
// run already settled, or with something still open, is left as it is.

export async function settleRun(tx: Tx, runId: string, now: Date): Promise<RunStatus | null> {
  const run = await lockRun(tx, runId);
  if (!run || run.status !== "awaiting_approval") return null;
  const approvals = await tx.approvalRequest.findMany({ where: { runId }, select: { status: true, action: true } });
  const writeBacks = await tx.writeBack.findMany({ where: { runId }, select: { outcome: true } });
  // An accepted release gap ends approved: nothing follows it to execute.
  if (approvals.some((a) => a.status === "pending" || (a.status === "approved" && a.action !== "release_gap"))) return null;
  if (writeBacks.some((w) => w.outcome === "pending")) return null;

  let to: RunStatus;
  let why: string;
  if (writeBacks.some((w) => w.outcome === "failed")) {
    to = "failed";
    why = "an approved write-back failed to execute";
  } else if (!writeBacks.some((w) => w.outcome === "succeeded") && approvals.some((a) => a.status === "rejected" || a.status === "expired")) {
    to = "escalated";
    why = "its write-backs were rejected or expired; a person takes over";
  } else {
    to = "succeeded";
    why = "every approval was decided and the approved write-backs executed";
  }
  if (!canTransitionRun(run.status, to)) return null;
  await transitionRun(tx, { runId, from: run.status, to, reason: why, now });
  return to;
}
