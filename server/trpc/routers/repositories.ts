import { visibleRepositoryIds } from "@/server/auth/roles";
import { protectedProcedure, router } from "../init";

export const repositoriesRouter = router({
  /** Repositories the user can see, with the user's role on each. */
  mine: protectedProcedure.query(async ({ ctx }) => {
    const ids = await visibleRepositoryIds(ctx.db, ctx.user);
    const repos = await ctx.db.repository.findMany({
      where: ids === "all" ? {} : { id: { in: ids } },
      orderBy: { fullName: "asc" },
      select: { id: true, fullName: true, forge: true, memberships: { where: { userId: ctx.user.id }, select: { role: true } } },
    });
    return repos.map(({ memberships, ...r }) => ({
      ...r,
      role: ctx.user.isAdmin ? ("admin" as const) : (memberships[0]?.role ?? "viewer"),
    }));
  }),
});
