import { visibleRepositoryIds } from "@/server/auth/roles";
import { demoStory, zStory } from "@/server/domain/demo/story";
import { protectedProcedure, router } from "../init";

export const demoRouter = router({
  /** The first-run story panel: each scene with links, within the repositories the reader may see. */
  story: protectedProcedure.output(zStory).query(async ({ ctx }) => demoStory({ db: ctx.db, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user) })),
});
