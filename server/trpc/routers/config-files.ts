import { z } from "zod";
import { applyStacksFile, exportStacks, zStacksFile } from "@/server/domain/config-files/stacks-file";
import { applyTriggersFile, exportTriggers, zTriggersFile } from "@/server/domain/config-files/triggers-file";
import { memberProcedure, router } from "../init";
import { zFilePlan, zStacksExport, zTriggersExport } from "../outputs/config-files";

// Stacks and trigger rules as files (the CLI's export|apply): plan with `dryRun`, then apply;
// the services behind them check every change as the forms' saves are checked.

export const configFilesRouter = router({
  exportStacks: memberProcedure.output(zStacksExport).query(({ ctx }) => exportStacks(ctx.db)),

  applyStacks: memberProcedure
    .input(z.object({ document: zStacksFile, dryRun: z.boolean().default(true) }))
    .output(zFilePlan)
    .mutation(({ ctx, input }) => applyStacksFile({ db: ctx.db, actor: ctx.user, document: input.document, dryRun: input.dryRun })),

  exportTriggers: memberProcedure.output(zTriggersExport).query(({ ctx }) => exportTriggers(ctx.db, ctx.user)),

  applyTriggers: memberProcedure
    .input(z.object({ document: zTriggersFile, dryRun: z.boolean().default(true) }))
    .output(zFilePlan)
    .mutation(({ ctx, input }) => applyTriggersFile({ db: ctx.db, actor: ctx.user, document: input.document, dryRun: input.dryRun })),
});
