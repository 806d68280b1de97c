import type { Db } from "@/server/db";
import { githubClient } from "@/server/forges/github/client";
import { loadGithubAppCredentials } from "./app-service";
import { applyInstallationDelivery, type InstallationOutcome } from "./installations";
import type { SealingKey } from "./sealed";

// "delivery.evaluate" for an installation event: apply it once, record the outcome on the
// delivery. A delivery already processed is skipped (a retried job, a redelivery's twin).

export async function processInstallationDelivery(opts: { db: Db; deliveryId: string; key: SealingKey; githubUrl: string; apiUrl?: string | null; now?: Date }): Promise<InstallationOutcome | "skipped" | "missing"> {
  const { db } = opts;
  const now = opts.now ?? new Date();
  const delivery = await db.webhookDelivery.findUnique({ where: { deliveryId: opts.deliveryId }, select: { event: true, payload: true, processedAt: true } });
  if (!delivery) return "missing";
  if (delivery.processedAt) return "skipped";
  const app = await loadGithubAppCredentials(db, opts.key);
  const result = await applyInstallationDelivery({
    db,
    event: delivery.event,
    payload: delivery.payload,
    appId: app?.appId ?? null,
    githubUrl: opts.githubUrl,
    now,
    lookUp: app
      ? async (installationId, fullName) => {
          const [owner, repo] = fullName.split("/") as [string, string];
          const client = githubClient({ auth: { kind: "installation", app, installationId, repository: fullName }, baseUrl: opts.apiUrl, maxWaitSeconds: 10 });
          const { data } = await client.rest.repos.get({ owner, repo });
          return { defaultBranch: data.default_branch };
        }
      : null,
  });
  await db.webhookDelivery.updateMany({ where: { deliveryId: opts.deliveryId, processedAt: null }, data: { outcome: result.outcome, detail: result.detail, processedAt: now } });
  return result;
}
