import { failLocalTriageReruns } from "@/server/domain/triage/rerun";
import { isAppError } from "@/server/errors";
import { runLocalCheck } from "@/server/forges/local/local-ci";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "ci.run": the local CI runs a repository's check at a commit (a rerun links its Pipeline to the run). */
export async function runCheckTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("ci.run", payload);
  let result: Awaited<ReturnType<typeof runLocalCheck>>;
  try {
    result = await runLocalCheck({
      db: ctx.db,
      dataDir: ctx.settings.dataDir,
      repositoryId: job.repositoryId,
      sha: job.sha,
      branch: job.branch,
      triggeredByRunId: job.triggeredByRunId,
      timeoutMs: ctx.settings.ciTimeoutMs,
      toolchainNodeModules: ctx.settings.toolchainNodeModules,
    });
  } catch (err) {
    // No check command (removed after the run was queued): every retry would fail the same way,
    // so the job ends here, and a rerun triage asked for at that commit fails with the reason.
    if (!isAppError(err) || err.reason !== "no_check_command") throw err;
    const failed = job.sha ? await failLocalTriageReruns({ db: ctx.db, repositoryId: job.repositoryId, sha: job.sha, reason: err.message }) : 0;
    ctx.log(`local CI not run: ${err.message}${failed > 0 ? ` (${failed} triage rerun(s) failed)` : ""}`);
    return;
  }
  ctx.log(`local CI ${result.externalId}: ${result.conclusion} in ${result.durationMs} ms`);
}
