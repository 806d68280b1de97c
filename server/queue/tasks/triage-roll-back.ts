import { requestRollBack } from "@/server/domain/writebacks/roll-back";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "triage.rollBack": the roll-back a triage decision asked for, as an approval item on its run (idempotent). */
export async function triageRollBackTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("triage.rollBack", payload);
  const result = await requestRollBack({ db: ctx.db, triageId: job.triageId, dataDir: ctx.settings.dataDir });
  ctx.log(`triage roll back ${job.triageId}: ${result.status} ${"detail" in result ? result.detail : result.approvalId}`);
}
