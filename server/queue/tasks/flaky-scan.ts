import { dueFlakyScans, runFlakyScan } from "@/server/domain/triggers/flaky-scan";
import { enqueue } from "../enqueue";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "flaky.tick": one flaky.scan per rule whose schedule fires this minute (job key: rule + minute). */
export async function flakyTickTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("flaky.tick", payload);
  const minute = job._cron?.ts ? new Date(job._cron.ts) : new Date();
  for (const due of await dueFlakyScans(ctx.db, minute)) {
    const at = due.at.toISOString();
    await enqueue(ctx.db, "flaky.scan", { ruleId: due.ruleId, at, requestedBy: "schedule" }, { jobKey: `flaky.scan:${due.ruleId}:${at}`, maxAttempts: 3 });
  }
}

/** "flaky.scan": scan one rule at one minute; a retry finds the stored scan and sends nothing twice. */
export async function flakyScanTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("flaky.scan", payload);
  const result = await runFlakyScan({ db: ctx.db, ruleId: job.ruleId, at: new Date(job.at), requestedBy: job.requestedBy });
  const clusters = result.groups.filter((g) => g.cluster).length;
  ctx.log(`flaky scan ${result.scanId} of rule ${job.ruleId}: ${result.groups.length} signatures, ${clusters} clusters${result.duplicate ? " (already scanned)" : ""}`);
}
