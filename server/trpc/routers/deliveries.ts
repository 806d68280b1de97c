import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { listDeliveries, zDeliveryListFilter } from "@/server/domain/deliveries/list";
import { reevaluateDelivery } from "@/server/domain/deliveries/reevaluate";
import { decodeCursor, encodeCursor } from "@/server/domain/runs/list";
import { adminProcedure, protectedProcedure, router } from "../init";
import { zDeliveryPage } from "../outputs/deliveries";

// Recorded deliveries: anyone signed in sees those of repositories they have a role on (an
// Airlock admin sees all, unregistered repositories included); re-evaluating is an admin's.

export const deliveriesRouter = router({
  list: protectedProcedure
    .input(zDeliveryListFilter.extend({ cursor: z.string().max(200).nullish(), limit: z.number().int().min(1).max(100).default(50) }))
    .output(zDeliveryPage)
    .query(async ({ ctx, input }) => {
      const { cursor, limit, ...filter } = input;
      const ids = await visibleRepositoryIds(ctx.db, ctx.user);
      const names = ids === "all" ? "all" : (await ctx.db.repository.findMany({ where: { id: { in: ids } }, select: { fullName: true } })).map((r) => r.fullName);
      const page = await listDeliveries({ db: ctx.db, visibleRepositoryNames: names, filter, cursor: cursor ? decodeCursor(cursor) : null, limit });
      return { items: page.items, nextCursor: page.next ? encodeCursor(page.next) : null, canReevaluate: ctx.user.isAdmin };
    }),

  reevaluate: adminProcedure
    .input(z.object({ deliveryId: z.string().trim().min(1).max(200) }))
    .output(z.object({ deliveryId: z.string(), queued: z.boolean() }))
    .mutation(({ ctx, input }) => reevaluateDelivery({ db: ctx.db, actor: ctx.user, deliveryId: input.deliveryId })),
});
