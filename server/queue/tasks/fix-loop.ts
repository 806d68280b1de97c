import { escalateFixLoop } from "@/server/domain/fixloop/escalate";
import { launchFixRun } from "@/server/domain/fixloop/launch";
import { requestReviewAgain } from "@/server/domain/fixloop/review-again";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { forgeResolver } from "@/server/domain/writebacks/forges";
import { env } from "@/server/env";
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

const forgesOf = async (ctx: WorkerContext) =>
  forgeResolver(ctx.db, {
    githubApp: await loadGithubAppCredentials(ctx.db, sealingKey()),
    dataDir: ctx.settings.dataDir,
    ciTimeoutMs: ctx.settings.ciTimeoutMs,
    toolchainNodeModules: ctx.settings.toolchainNodeModules,
    githubToken: env.GITHUB_TOKEN ?? null,
    githubApiUrl: env.GITHUB_API_URL ?? null,
  });

/** "fixloop.review": a fix run's patch was pushed; ask for review again (the next validation round). */
export async function reviewAgainTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const job = parseJobPayload("fixloop.review", payload);
  const result = await requestReviewAgain({ db: ctx.db, forgeFor: await forgesOf(ctx), intentId: job.intentId });
  ctx.log(`fix-forward review request for intent ${job.intentId}: ${result.kind === "requested" ? result.detail : result.reason}`);
}
