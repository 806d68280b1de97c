import { escalateFixLoop } from "@/server/domain/fixloop/escalate";
import { launchFixRun } from "@/server/domain/fixloop/launch";
import { notify } from "@/server/domain/notifications/notify";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "fixloop.launch": the fix run of one intent, once; a failed launch burns the attempt. */
export async function launchFixRunTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("fixloop.launch", payload);
  const result = await launchFixRun({ db: ctx.db, intentId: job.intentId });
  ctx.log(`fix-forward intent ${job.intentId}: ${result.kind}${result.kind === "launched" ? ` run #${result.number}` : result.kind === "failed" ? ` (${result.error}; next: ${result.next})` : ` (${result.reason})`}`);
}

/** "fixloop.escalate": hand the branch to a person, once; bounded tries. */
export async function escalateFixLoopTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("fixloop.escalate", payload);
  const result = await escalateFixLoop({ db: ctx.db, intentId: job.intentId, notify: (tx, input) => notify(tx, input), log: ctx.log });
  ctx.log(`fix-forward escalation ${job.intentId}: ${result.kind}${result.kind === "failed" ? ` (${result.error}; retried: ${result.retried})` : ""}`);
}
