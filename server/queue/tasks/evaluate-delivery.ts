import type { Db } from "@/server/db";
import { githubChangedFiles } from "@/server/domain/evaluation/changed-files";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { env } from "@/server/env";
import { parseJobPayload } from "../jobs";

/**
 * "delivery.evaluate": match a recorded webhook/local-CI delivery against the trigger rules and
 * create its runs (or record the drops). Idempotent: a processed delivery is skipped, and dedupe
 * keys stop a second run for the same trigger.
 */
export async function evaluateDeliveryTask(payload: unknown, { db }: { db: Db }): Promise<void> {
  const { deliveryId } = parseJobPayload("delivery.evaluate", payload);
  await evaluateDelivery({ db, deliveryId, changedFiles: githubChangedFiles({ token: env.GITHUB_TOKEN ?? null, baseUrl: env.GITHUB_API_URL ?? null }) });
}
