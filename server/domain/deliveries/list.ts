import { z } from "zod";
import type { Db, Prisma } from "@/server/db";
import { DeliveryOutcome } from "@/server/db/generated/enums";
import { repositoryNameOf } from "@/server/domain/ingest/stored-delivery";

// The deliveries page (GitHub's "Recent deliveries", for Airlock): every recorded delivery with
// its event, action, repository, outcome and reason, timings, and the runs and drops it caused.
// An Airlock admin sees all (unregistered repositories included); others see the deliveries of
// repositories they have a role on.

export const zDeliveryOutcome = z.enum(DeliveryOutcome);

export const zDeliveryListFilter = z.object({
  outcome: zDeliveryOutcome.optional(),
  event: z.string().trim().max(100).optional(),
  repository: z.string().trim().max(200).optional(),
  deliveryId: z.string().trim().max(200).optional(),
});
export type DeliveryListFilter = z.infer<typeof zDeliveryListFilter>;

export type DeliveryCursor = { createdAt: Date; id: string };

const repoPath = (source: "github" | "local") => (source === "github" ? ["repository", "full_name"] : ["ciEvent", "repository", "fullName"]);

function repositoryWhere(names: string[]): Prisma.WebhookDeliveryWhereInput {
  return { OR: names.flatMap((n) => [{ source: "github" as const, payload: { path: repoPath("github"), equals: n } }, { source: "local" as const, payload: { path: repoPath("local"), equals: n } }]) };
}

export async function listDeliveries(opts: { db: Db; visibleRepositoryNames: string[] | "all"; filter: DeliveryListFilter; cursor: DeliveryCursor | null; limit: number }) {
  const { db, filter } = opts;
  const and: Prisma.WebhookDeliveryWhereInput[] = [];
  if (opts.visibleRepositoryNames !== "all") {
    if (opts.visibleRepositoryNames.length === 0) return { items: [], next: null };
    and.push(repositoryWhere(opts.visibleRepositoryNames));
  }
  if (filter.outcome) and.push({ outcome: filter.outcome });
  if (filter.event) and.push({ event: filter.event });
  if (filter.deliveryId) and.push({ deliveryId: filter.deliveryId });
  if (filter.repository) {
    and.push({ OR: [{ source: "github", payload: { path: repoPath("github"), string_contains: filter.repository } }, { source: "local", payload: { path: repoPath("local"), string_contains: filter.repository } }] });
  }
  if (opts.cursor) and.push({ OR: [{ receivedAt: { lt: opts.cursor.createdAt } }, { receivedAt: opts.cursor.createdAt, id: { lt: opts.cursor.id } }] });
  const rows = await db.webhookDelivery.findMany({
    where: { AND: and },
    orderBy: [{ receivedAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: { id: true, deliveryId: true, source: true, event: true, action: true, payload: true, outcome: true, detail: true, receivedAt: true, processedAt: true, reevaluations: true, reevaluatedAt: true },
  });
  const page = rows.slice(0, opts.limit);
  const ids = page.map((r) => r.deliveryId);
  const [runs, drops, repos] = await Promise.all([
    ids.length === 0
      ? []
      : db.$queryRaw<{ id: string; number: number; status: string; deliveryId: string }[]>`
          SELECT "id", "number", "status"::text AS "status", "contextBundle"->'source'->>'deliveryId' AS "deliveryId"
          FROM "AgentDispatchRun" WHERE "contextBundle"->'source'->>'deliveryId' = ANY(${ids}::text[]) ORDER BY "number"`,
    ids.length === 0 ? [] : db.triggerDrop.findMany({ where: { deliveryId: { in: ids } }, select: { id: true, deliveryId: true, reason: true, runId: true, createdAt: true }, orderBy: { createdAt: "asc" } }),
    db.repository.findMany({ where: { fullName: { in: [...new Set(page.map((r) => repositoryNameOf(r)).filter((n): n is string => n !== null))], mode: "insensitive" } }, select: { id: true, fullName: true, disabledAt: true } }),
  ]);
  const repoByName = new Map(repos.map((r) => [r.fullName.toLowerCase(), r]));
  const items = page.map((r) => {
    const name = repositoryNameOf(r);
    const repo = name ? (repoByName.get(name.toLowerCase()) ?? null) : null;
    return {
      id: r.id,
      deliveryId: r.deliveryId,
      source: r.source,
      event: r.event,
      action: r.action,
      outcome: r.outcome,
      detail: r.detail,
      receivedAt: r.receivedAt,
      processedAt: r.processedAt,
      /** Receipt to outcome, in milliseconds (null while waiting). */
      tookMs: r.processedAt ? r.processedAt.getTime() - r.receivedAt.getTime() : null,
      reevaluations: r.reevaluations,
      reevaluatedAt: r.reevaluatedAt,
      repository: { name, registeredId: repo?.id ?? null, disabled: repo?.disabledAt != null },
      runs: runs.filter((x) => x.deliveryId === r.deliveryId).map(({ id, number, status }) => ({ id, number, status })),
      drops: drops.filter((d) => d.deliveryId === r.deliveryId).map(({ id, reason, runId }) => ({ id, reason: reason.slice(0, 500), runId })),
      canReevaluate: reevaluable(r.outcome),
    };
  });
  const last = page.at(-1);
  return { items, next: rows.length > opts.limit && last ? { createdAt: last.receivedAt, id: last.id } : null };
}

/** A delivery still waiting, or one whose payload failed validation, cannot be evaluated again. */
export const reevaluable = (outcome: string) => outcome !== "received" && outcome !== "rejected";
