import { listPickableRepositories } from "@/server/domain/repositories/settings-presenter";
import { protectedProcedure, router } from "../init";
import { zPickableRepositories } from "../outputs/repositories";

export const repositoriesRouter = router({
  /** Repositories the user can see and aim new work at (not removed), with the user's role on each. */
  mine: protectedProcedure.output(zPickableRepositories).query(({ ctx }) => listPickableRepositories({ db: ctx.db, actor: ctx.user })),
});
