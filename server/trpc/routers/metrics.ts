import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { metricsSeries, metricsSnapshot } from "@/server/domain/metrics";
import { protectedProcedure, requireRepositoryRole, router } from "../init";
import { zMetricsSeries, zMetricsSnapshot } from "../outputs/metrics";

const zWindow = z.object({ repositoryId: z.string().min(1).max(100).optional(), windowHours: z.number().int().min(1).max(24 * 90).default(24 * 7) });

export const metricsRouter = router({
  overview: protectedProcedure.input(zWindow).output(zMetricsSnapshot).query(async ({ ctx, input }) => {
    if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
    const repositoryIds = input.repositoryId ? [input.repositoryId] : await visibleRepositoryIds(ctx.db, ctx.user);
    return metricsSnapshot({ db: ctx.db, repositoryIds, now: ctx.now(), windowHours: input.windowHours });
  }),
  /** The same figures per hour or day over the window, for the charts. */
  series: protectedProcedure.input(zWindow).output(zMetricsSeries).query(async ({ ctx, input }) => {
    if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
    const repositoryIds = input.repositoryId ? [input.repositoryId] : await visibleRepositoryIds(ctx.db, ctx.user);
    return metricsSeries({ db: ctx.db, repositoryIds, now: ctx.now(), windowHours: input.windowHours });
  }),
});
