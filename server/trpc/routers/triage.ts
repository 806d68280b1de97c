import { getRunTriage } from "@/server/domain/triage/presenter";
import { router, runProcedure } from "../init";
import { zRunTriage } from "../outputs/runs";

// CI triage as the run view shows it; the decision's proof itself comes from proofs.byRun.
export const triageRouter = router({
  byRun: runProcedure("viewer").output(zRunTriage).query(({ ctx, input }) => getRunTriage({ db: ctx.db, runId: input.runId })),
});
