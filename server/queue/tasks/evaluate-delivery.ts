import type { Db } from "@/server/db";
import { githubChangedFiles } from "@/server/domain/evaluation/changed-files";
import { evaluateDelivery, readDelivery } from "@/server/domain/evaluation/evaluate";
import { githubJobLogs } from "@/server/domain/evaluation/job-log";
import { githubCollaboratorRole, isRequestedAction, processRequestedAction } from "@/server/domain/check-runs/requested-action";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { processInstallationDelivery } from "@/server/domain/github-app/installation-delivery";
import { isInstallationEvent } from "@/server/domain/github-app/installations";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { parseJobPayload } from "../jobs";

/**
 * "delivery.evaluate": match a recorded webhook/local-CI delivery against the trigger rules and
 * create its runs (or record the drops); a GitHub App installation event registers or disables
 * repositories instead. Idempotent: a processed delivery is skipped, and dedupe keys stop a
 * second run for the same trigger.
 */
export async function evaluateDeliveryTask(payload: unknown, { db }: { db: Db }): Promise<void> {
  const { deliveryId } = parseJobPayload("delivery.evaluate", payload);
  const row = await readDelivery(db, deliveryId);
  if (row?.source === "github" && isInstallationEvent(row.event)) {
    await processInstallationDelivery({ db, deliveryId, key: sealingKey(), githubUrl: env.GITHUB_URL, apiUrl: env.GITHUB_API_URL ?? null });
    return;
  }
  if (row?.source === "github" && isRequestedAction(row.event, row.action)) {
    await processRequestedAction({ db, deliveryId, collaboratorRole: githubCollaboratorRole({ app: () => loadGithubAppCredentials(db, sealingKey()), baseUrl: env.GITHUB_API_URL ?? null }) });
    return;
  }
  const githubApiUrl = env.GITHUB_API_URL ?? null;
  await evaluateDelivery({
    db,
    deliveryId,
    delivery: row,
    changedFiles: githubChangedFiles({ token: env.GITHUB_TOKEN ?? null, baseUrl: githubApiUrl }),
    // The app's credentials are read only when a failed job's log is needed.
    jobLog: githubJobLogs({ githubApp: () => loadGithubAppCredentials(db, sealingKey()), githubToken: env.GITHUB_TOKEN ?? null, githubApiUrl, logHosts: env.GITHUB_LOG_HOSTS }),
  });
}
