import { Prisma, type Db, type NotificationKind } from "@/server/db";

// The per-user view of notifications: a list with read flags, an unread count, marking read.
// Every function is scoped to `repositoryIds` (from visibleRepositoryIds): a user never sees,
// counts or marks another repository's notifications.

export type RepositoryScope = string[] | "all";
type Cursor = { createdAt: Date; id: string };

/** The bell shows at most this many (as "99+"); counting stops there. */
export const UNREAD_COUNT_CAP = 100;

const scopeWhere = (repositoryIds: RepositoryScope): Prisma.NotificationWhereInput =>
  repositoryIds === "all" ? {} : { repositoryId: { in: repositoryIds } };

export type NotificationItem = {
  id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  href: string;
  runId: string | null;
  pullRequestId: string | null;
  repository: { id: string; fullName: string };
  createdAt: Date;
  read: boolean;
};

/** Newest first, keyset-paginated on (createdAt, id). */
export async function listNotifications(opts: {
  db: Db;
  userId: string;
  repositoryIds: RepositoryScope;
  repositoryId?: string;
  unreadOnly?: boolean;
  cursor?: Cursor | null;
  limit: number;
}): Promise<{ items: NotificationItem[]; next: Cursor | null }> {
  const { db, userId, cursor } = opts;
  const rows = await db.notification.findMany({
    where: {
      AND: [
        scopeWhere(opts.repositoryIds),
        opts.repositoryId ? { repositoryId: opts.repositoryId } : {},
        opts.unreadOnly ? { reads: { none: { userId } } } : {},
        cursor ? { OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] } : {},
      ],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: {
      id: true,
      kind: true,
      title: true,
      body: true,
      href: true,
      runId: true,
      pullRequestId: true,
      createdAt: true,
      repository: { select: { id: true, fullName: true } },
      reads: { where: { userId }, select: { readAt: true } },
    },
  });
  const items = rows.slice(0, opts.limit).map(({ reads, ...n }) => ({ ...n, read: reads.length > 0 }));
  const last = items.at(-1);
  return { items, next: rows.length > opts.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** Unread notifications of the user's repositories, counted up to UNREAD_COUNT_CAP. */
export async function unreadCount(opts: { db: Db; userId: string; repositoryIds: RepositoryScope }): Promise<number> {
  return opts.db.notification.count({
    where: { ...scopeWhere(opts.repositoryIds), reads: { none: { userId: opts.userId } } },
    take: UNREAD_COUNT_CAP,
  });
}

/**
 * Marks the given notifications read for this user. Ids outside the user's repositories (or
 * unknown) are ignored, not reported, so the answer never reveals they exist. Idempotent.
 */
export async function markRead(opts: { db: Db; userId: string; repositoryIds: RepositoryScope; ids: string[] }): Promise<{ marked: number }> {
  const visible = await opts.db.notification.findMany({
    where: { id: { in: opts.ids }, ...scopeWhere(opts.repositoryIds) },
    select: { id: true },
  });
  const res = await opts.db.notificationRead.createMany({
    data: visible.map((n) => ({ userId: opts.userId, notificationId: n.id })),
    skipDuplicates: true,
  });
  return { marked: res.count };
}

/**
 * Marks every notification of the user's repositories made up to `upTo` read, in one statement.
 * `upTo` is the newest one the user was shown, so one that arrives meanwhile stays unread.
 */
export async function markAllRead(opts: { db: Db; userId: string; repositoryIds: RepositoryScope; upTo: Date }): Promise<{ marked: number }> {
  const { repositoryIds } = opts;
  if (repositoryIds !== "all" && repositoryIds.length === 0) return { marked: 0 };
  const scope = repositoryIds === "all" ? Prisma.empty : Prisma.sql`AND n."repositoryId" IN (${Prisma.join(repositoryIds)})`;
  const marked = await opts.db.$executeRaw`
    INSERT INTO "NotificationRead" ("userId", "notificationId")
    SELECT ${opts.userId}, n."id" FROM "Notification" n
    WHERE n."createdAt" <= ${opts.upTo} ${scope}
      AND NOT EXISTS (SELECT 1 FROM "NotificationRead" r WHERE r."notificationId" = n."id" AND r."userId" = ${opts.userId})
    ON CONFLICT DO NOTHING`;
  return { marked };
}
