import { env } from "@/server/env";
import { executeWriteBack } from "@/server/domain/writebacks/execute";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { forgeResolver } from "@/server/domain/writebacks/forges";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "writeback.execute": an approved (or exempt) write-back through its forge, at most once. */
export async function executeWriteBackTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("writeback.execute", payload);
  const forgeFor = forgeResolver(ctx.db, {
    githubApp: await loadGithubAppCredentials(ctx.db, sealingKey()),
    dataDir: ctx.settings.dataDir,
    ciTimeoutMs: ctx.settings.ciTimeoutMs,
    toolchainNodeModules: ctx.settings.toolchainNodeModules,
    githubToken: env.GITHUB_TOKEN ?? null,
    githubApiUrl: env.GITHUB_API_URL ?? null,
  });
  const result = await executeWriteBack({ db: ctx.db, forgeFor, approvalId: job.approvalId, writeBackId: job.writeBackId });
  ctx.log(`write-back ${result.writeBackId}: ${result.outcome}${result.reconciled ? " (reconciled)" : ""}${result.externalRef ? ` ${result.externalRef}` : ""}`);
}
