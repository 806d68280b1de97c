import { env } from "@/server/env";
import { performTriageRerun } from "@/server/domain/triage/rerun";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "triage.rerun": the GitHub rerun a triage decision asked for, at most once. */
export async function triageRerunTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("triage.rerun", payload);
  const result = await performTriageRerun({ db: ctx.db, triageId: job.triageId, settings: { githubToken: env.GITHUB_TOKEN ?? null, githubApiUrl: env.GITHUB_API_URL ?? null } });
  ctx.log(`triage rerun ${job.triageId}: ${result.status} ${result.detail}`);
}
