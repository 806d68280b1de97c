import { runLocalCheck } from "@/server/forges/local/local-ci";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "ci.run": the local CI runs a repository's check at a commit (a rerun links its Pipeline to the run). */
export async function runCheckTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("ci.run", payload);
  const result = await runLocalCheck({
    db: ctx.db,
    dataDir: ctx.settings.dataDir,
    repositoryId: job.repositoryId,
    sha: job.sha,
    branch: job.branch,
    triggeredByRunId: job.triggeredByRunId,
    timeoutMs: ctx.settings.ciTimeoutMs,
    toolchainNodeModules: ctx.settings.toolchainNodeModules,
  });
  ctx.log(`local CI ${result.externalId}: ${result.conclusion} in ${result.durationMs} ms`);
}
