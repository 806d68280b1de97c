import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { listNotifications, markAllRead, markRead, unreadCount } from "@/server/domain/notifications/inbox";
import { decodeCursor, encodeCursor } from "@/server/domain/runs/list";
import { protectedProcedure, requireRepositoryRole, router } from "../init";
import { zNotificationPage } from "../outputs/notifications";
import { zUpdated } from "../outputs/shared";

const zId = z.string().min(1).max(100);

export const notificationsRouter = router({
  list: protectedProcedure
    .input(
      z.object({
        repositoryId: zId.optional(),
        unreadOnly: z.boolean().default(false),
        cursor: z.string().max(200).nullish(),
        limit: z.number().int().min(1).max(100).default(30),
      }),
    )
    .output(zNotificationPage)
    .query(async ({ ctx, input }) => {
      if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
      const page = await listNotifications({
        db: ctx.db,
        userId: ctx.user.id,
        repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user),
        repositoryId: input.repositoryId,
        unreadOnly: input.unreadOnly,
        cursor: input.cursor ? decodeCursor(input.cursor) : null,
        limit: input.limit,
      });
      return { items: page.items, nextCursor: page.next ? encodeCursor(page.next) : null };
    }),

  unreadCount: protectedProcedure.output(z.number().int()).query(async ({ ctx }) =>
    unreadCount({ db: ctx.db, userId: ctx.user.id, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user) }),
  ),

  markRead: protectedProcedure
    .input(z.object({ ids: z.array(zId).min(1).max(200) }))
    .output(zUpdated)
    .mutation(async ({ ctx, input }) =>
      markRead({ db: ctx.db, userId: ctx.user.id, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user), ids: input.ids }),
    ),

  markAllRead: protectedProcedure
    // The newest notification the user was shown; absent, everything up to now.
    .input(z.object({ upTo: z.date().optional() }))
    .output(zUpdated)
    .mutation(async ({ ctx, input }) =>
      markAllRead({
        db: ctx.db,
        userId: ctx.user.id,
        repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user),
        upTo: input.upTo ?? ctx.now(),
      }),
    ),
});
