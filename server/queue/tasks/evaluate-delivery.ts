import type { Db } from "@/server/db";
import { evaluateBatch, type BatchEntry } from "@/server/domain/evaluation/batch";
import { githubChangedFiles } from "@/server/domain/evaluation/changed-files";
import { readDeliveries, type PendingDelivery } from "@/server/domain/evaluation/evaluate";
import { githubJobLogs } from "@/server/domain/evaluation/job-log";
import { githubCollaboratorRole, isRequestedAction, processRequestedAction } from "@/server/domain/use-cases/requested-action";
import { loadGithubAppCredentials } from "@/server/domain/github-app/app-service";
import { processInstallationDelivery } from "@/server/domain/github-app/installation-delivery";
import { isInstallationEvent } from "@/server/domain/github-app/installations";
import { sealingKey } from "@/server/domain/github-app/key";
import { env } from "@/server/env";
import { parseJobPayload } from "../jobs";

/**
 * "delivery.evaluate": match recorded webhook/local-CI deliveries against the trigger rules and
 * create their runs (or record the drops), in one batch (server/domain/evaluation/batch.ts); a
 * GitHub App installation event registers or disables repositories instead, and a check run's
 * requested action is applied. Idempotent: a processed delivery is skipped, and dedupe keys stop
 * a second run for the same trigger. A batch's payload is an array: the result is one promise
 * per entry, so graphile-worker retries only the entries that failed.
 */
export async function evaluateDeliveryTask(payload: unknown, { db }: { db: Db }): Promise<void | Promise<void>[]> {
  const parsed = parseJobPayload("delivery.evaluate", payload);
  const ids = Array.isArray(parsed) ? parsed.map((p) => p.deliveryId) : [parsed.deliveryId];
  const rows = await readDeliveries(db, ids);
  const entries = new Map<string, Promise<void>>();
  const evaluate: PendingDelivery[] = [];
  for (const row of rows) {
    const special = specialDelivery(db, row);
    // Read after the batch below: marked handled now so an early failure is not "unhandled".
    special?.catch(() => undefined);
    if (special) entries.set(row.deliveryId, special);
    else evaluate.push(row);
  }
  const githubApiUrl = env.GITHUB_API_URL ?? null;
  const evaluated = await evaluateBatch({
    db,
    deliveryIds: ids.filter((id) => !entries.has(id)),
    rows: evaluate,
    changedFiles: githubChangedFiles({ token: env.GITHUB_TOKEN ?? null, baseUrl: githubApiUrl }),
    // The app's credentials are read only when a failed job's log is needed.
    jobLog: githubJobLogs({ githubApp: () => loadGithubAppCredentials(db, sealingKey()), githubToken: env.GITHUB_TOKEN ?? null, githubApiUrl, logHosts: env.GITHUB_LOG_HOSTS }),
  });
  for (const entry of evaluated) entries.set(entry.deliveryId, settled(entry));
  const results = ids.map((id) => entries.get(id)!);
  if (Array.isArray(parsed)) return results;
  // A single delivery's job (jobs queued before batches, a re-evaluation) fails as a whole.
  await results[0];
}

/** The delivery kinds that are not evaluated against rules, applied one at a time. */
function specialDelivery(db: Db, row: PendingDelivery): Promise<void> | null {
  if (row.source === "github" && isInstallationEvent(row.event)) {
    return processInstallationDelivery({ db, deliveryId: row.deliveryId, key: sealingKey(), githubUrl: env.GITHUB_URL, apiUrl: env.GITHUB_API_URL ?? null }).then(() => undefined);
  }
  if (row.source === "github" && isRequestedAction(row.event, row.action)) {
    return processRequestedAction({ db, deliveryId: row.deliveryId, collaboratorRole: githubCollaboratorRole({ app: () => loadGithubAppCredentials(db, sealingKey()), baseUrl: env.GITHUB_API_URL ?? null }) }).then(() => undefined);
  }
  return null;
}

/**
 * An entry's promise; a failed one is marked handled here (graphile-worker reads it with
 * allSettled after the task returns) so Node never reports it as an unhandled rejection.
 */
function settled(entry: BatchEntry): Promise<void> {
  if (entry.ok) return Promise.resolve();
  const failed = Promise.reject(entry.error instanceof Error ? entry.error : new Error(String(entry.error)));
  failed.catch(() => undefined);
  return failed;
}
