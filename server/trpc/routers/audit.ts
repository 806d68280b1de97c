import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { listAudit } from "@/server/domain/audit";
import { decodeCursor, encodeCursor } from "@/server/domain/runs/list";
import { protectedProcedure, requireRepositoryRole, router } from "../init";
import { zAuditPage } from "../outputs/audit";

export const auditRouter = router({
  list: protectedProcedure
    .input(
      z.object({
        repositoryId: z.string().min(1).max(100).optional(),
        action: z.string().trim().max(100).optional(),
        actor: z.string().trim().max(200).optional(),
        objectType: z.string().trim().max(100).optional(),
        objectId: z.string().trim().max(100).optional(),
        cursor: z.string().max(200).nullish(),
        limit: z.number().int().min(1).max(200).default(50),
      }),
    )
    .output(zAuditPage)
    .query(async ({ ctx, input }) => {
      if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
      const { cursor, limit, ...filter } = input;
      const page = await listAudit({
        db: ctx.db,
        repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user),
        filter,
        cursor: cursor ? decodeCursor(cursor) : null,
        limit,
      });
      return { items: page.items, nextCursor: page.next ? encodeCursor(page.next) : null };
    }),
});
