import { syncCheckRun } from "@/server/domain/check-runs/sync";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { githubClient } from "@/server/forges/github/client";
import { parseJobPayload } from "../jobs";
import type { WorkerContext } from "../worker-context";

/** "checkrun.sync": the run's state on its GitHub check run, written once per state (check-runs/sync.ts). */
export async function checkRunSyncTask(payload: unknown, ctx: Pick<WorkerContext, "db" | "log">): Promise<void> {
  const job = parseJobPayload("checkrun.sync", payload);
  const baseUrl = env.GITHUB_API_URL ?? null;
  const result = await syncCheckRun({
    db: ctx.db,
    runId: job.runId,
    airlockUrl: env.AIRLOCK_URL ?? `http://localhost:${env.PORT}`,
    clientFor: async ({ fullName, installationId }) => {
      const app = await loadGithubAppCredentials(ctx.db, sealingKey());
      // Check runs are written by the app's installation only (GitHub refuses personal tokens).
      return app ? githubClient({ auth: { kind: "installation", app, installationId: installationId.toString(), repository: fullName }, baseUrl }) : null;
    },
  });
  ctx.log(`check run of run ${job.runId}: ${result.kind}${"state" in result ? ` ${result.state}` : ""}${"reason" in result ? ` (${result.reason})` : ""}`);
}
