import { z } from "zod";
import { getRunFixLoop, getFixLoop } from "@/server/domain/fixloop/presenter";
import { reopenForAgents } from "@/server/domain/fixloop/reopen";
import { repositoryProcedure, router, runProcedure } from "../init";
import { auditActorOf } from "@/server/domain/actor";
import { zFixLoop } from "../outputs/fix-loops";

// The fix-forward loop of a branch: its rounds, bound, attributions and escalation; and the
// maintainer's "re-open for agents" after an escalation.

const zBranch = z.object({ branch: z.string().min(1).max(255) });

export const fixLoopsRouter = router({
  byBranch: repositoryProcedure("viewer")
    .input(zBranch)
    .output(zFixLoop)
    .query(({ ctx, input }) => getFixLoop({ db: ctx.db, repositoryId: input.repositoryId, branch: input.branch })),

  byRun: runProcedure("viewer").output(zFixLoop.nullable()).query(({ ctx, input }) => getRunFixLoop({ db: ctx.db, runId: input.runId })),

  reopen: repositoryProcedure("maintainer")
    .input(zBranch)
    .output(z.object({ branch: z.string(), resetAt: z.date(), labelWriteBackId: z.string().nullable() }))
    .mutation(({ ctx, input }) =>
      reopenForAgents({ db: ctx.db, actor: auditActorOf(ctx.user), repositoryId: input.repositoryId, branch: input.branch, now: ctx.now() }),
    ),
});
