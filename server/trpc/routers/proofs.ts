import { z } from "zod";
import { recheckDecision } from "@/server/domain/policy/decide";
import { decisionRepository, getDecision, listRunDecisions } from "@/server/domain/policy/decisions";
import { memberProcedure, requireRepositoryRole, router, runProcedure } from "../init";
import { zDecisionView, zRecheckedDecision } from "../outputs/policies";

// Stored decisions and their proofs. A decision made for a run is readable by the run
// repository's viewers; one made outside any run (e.g. from the policy page) by anyone with a role.

const decisionProcedure = memberProcedure
  .input(z.object({ decisionId: z.string().min(1).max(100) }))
  .use(async ({ ctx, input, next }) => {
    const { repositoryId } = await decisionRepository({ db: ctx.db, decisionId: input.decisionId });
    if (repositoryId) await requireRepositoryRole(ctx, repositoryId, "viewer");
    return next();
  });

export const proofsRouter = router({
  byRun: runProcedure("viewer").output(z.array(zDecisionView)).query(({ ctx, input }) => listRunDecisions({ db: ctx.db, runId: input.runId })),

  byId: decisionProcedure.output(zDecisionView).query(({ ctx, input }) => getDecision({ db: ctx.db, decisionId: input.decisionId })),

  /** Re-evaluates a stored decision: against its own version (must agree) or today's. */
  recheck: decisionProcedure
    .input(z.object({ against: z.enum(["stored", "current"]).default("stored") }))
    .output(zRecheckedDecision)
    .query(({ ctx, input }) => recheckDecision({ db: ctx.db, decisionId: input.decisionId, against: input.against })),
});
