import { afterCommit, type Db, type Prisma } from "@/server/db";
import { observeAudit } from "@/server/observability/observe-events";

export type AuditActor = { userId: string | null; label: string };

/** One audit row per state change a person causes; call it inside the change's transaction. */
export function recordAudit(
  db: Db,
  entry: {
    actor: AuditActor;
    action: string;
    objectType: string;
    objectId: string;
    repositoryId?: string | null;
    detail?: Prisma.InputJsonValue;
  },
) {
  return db.auditEntry.create({
    data: {
      actorUserId: entry.actor.userId,
      actor: entry.actor.label,
      action: entry.action,
      objectType: entry.objectType,
      objectId: entry.objectId,
      repositoryId: entry.repositoryId ?? null,
      detail: entry.detail,
    },
  }).then((row) => {
    afterCommit(db, () => observeAudit(entry));
    return row;
  });
}

export type AuditFilter = { repositoryId?: string; action?: string; actor?: string; objectType?: string; objectId?: string };

/**
 * Audit entries, newest first, keyset-paginated on (createdAt, id). Scoped to
 * `repositoryIds`; entries with no repository (global changes) only for "all".
 */
export async function listAudit(opts: {
  db: Db;
  repositoryIds: string[] | "all";
  filter: AuditFilter;
  cursor?: { createdAt: Date; id: string } | null;
  limit: number;
}) {
  const { filter } = opts;
  const rows = await opts.db.auditEntry.findMany({
    where: {
      AND: [
        opts.repositoryIds === "all" ? {} : { repositoryId: { in: opts.repositoryIds } },
        filter.repositoryId ? { repositoryId: filter.repositoryId } : {},
        filter.action ? { action: { startsWith: filter.action } } : {},
        filter.actor ? { actor: { contains: filter.actor, mode: "insensitive" } } : {},
        filter.objectType ? { objectType: filter.objectType } : {},
        filter.objectId ? { objectId: filter.objectId } : {},
        opts.cursor
          ? { OR: [{ createdAt: { lt: opts.cursor.createdAt } }, { createdAt: opts.cursor.createdAt, id: { lt: opts.cursor.id } }] }
          : {},
      ],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
  });
  const items = rows.slice(0, opts.limit);
  const last = items.at(-1);
  return { items, next: rows.length > opts.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}
