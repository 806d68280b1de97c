import { env } from "@/server/env";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { forgeResolver } from "@/server/domain/writebacks/forges";
import { maxSettleTries, settleDelayMs, settleRerun } from "@/server/domain/writebacks/rerun";
import { enqueue } from "../enqueue";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "rerun.settle": a GitHub rerun's result, read until its attempt completes (bounded tries, backing off). */
export async function settleRerunTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("rerun.settle", payload);
  const forgeFor = forgeResolver(ctx.db, {
    githubApp: await loadGithubAppCredentials(ctx.db, sealingKey()),
    dataDir: ctx.settings.dataDir,
    ciTimeoutMs: ctx.settings.ciTimeoutMs,
    githubToken: env.GITHUB_TOKEN ?? null,
    githubApiUrl: env.GITHUB_API_URL ?? null,
  });
  const outcome = await settleRerun({ db: ctx.db, forgeFor, writeBackId: job.writeBackId });
  const tries = (job.tries ?? 0) + 1;
  if (outcome !== "waiting") return ctx.log(`rerun ${job.writeBackId}: ${outcome}`);
  if (tries >= maxSettleTries) return ctx.log(`rerun ${job.writeBackId}: still not finished after ${tries} reads; no longer waiting`);
  await enqueue(ctx.db, "rerun.settle", { writeBackId: job.writeBackId, tries }, { jobKey: `rerun-settle:${job.writeBackId}`, runAt: new Date(Date.now() + settleDelayMs(tries)) });
}
