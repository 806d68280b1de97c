import { z } from "zod";
import { dryRunTriggerRule } from "@/server/domain/evaluation/dry-run";
import { zDryRunInput, zRuleIdInput, zRuleRefInput, zTriggerRuleInput, zUpdateTriggerRuleInput } from "@/server/domain/triggers/forms/schemas";
import { getTriggerRule, listFlakyScans, listTriggerRules, getTriggerFormOptions } from "@/server/domain/triggers/rules-presenter";
import { createTriggerRule, deleteTriggerRule, requestFlakyScan, updateTriggerRule } from "@/server/domain/triggers/rules-service";
import { memberProcedure, router } from "../init";
import { zDryRun } from "../outputs/evaluation";
import { zDeleted } from "../outputs/shared";
import { zFlakyScans, zTriggerFormOptions, zTriggerRuleDetail, zTriggerRuleList, zTriggerRuleRow } from "../outputs/triggers";

// Trigger rules: a repository's maintainers change its rules, an Airlock admin the rules for
// every repository. The rule's repository comes from the stored row as well as the input, so the
// services check the roles (server/domain/triggers/rules-service.ts).

export const triggersRouter = router({
  list: memberProcedure.output(zTriggerRuleList).query(({ ctx }) => listTriggerRules({ db: ctx.db, actor: ctx.user })),

  byId: memberProcedure.input(zRuleIdInput).output(zTriggerRuleDetail).query(({ ctx, input }) => getTriggerRule({ db: ctx.db, actor: ctx.user, ruleId: input.ruleId })),

  formOptions: memberProcedure.output(zTriggerFormOptions).query(({ ctx }) => getTriggerFormOptions({ db: ctx.db, actor: ctx.user })),

  create: memberProcedure.input(zTriggerRuleInput).output(zTriggerRuleRow).mutation(({ ctx, input }) => createTriggerRule({ db: ctx.db, actor: ctx.user, input })),

  update: memberProcedure.input(zUpdateTriggerRuleInput).output(zTriggerRuleRow).mutation(({ ctx, input }) => updateTriggerRule({ db: ctx.db, actor: ctx.user, input })),

  delete: memberProcedure
    .input(zRuleRefInput)
    .output(zDeleted)
    .mutation(({ ctx, input }) => deleteTriggerRule({ db: ctx.db, actor: ctx.user, ruleId: input.ruleId, expectedVersion: input.expectedVersion })),

  /** A flaky-scan rule's recent scans (groups of repositories the viewer can see). */
  scans: memberProcedure
    .input(zRuleIdInput.extend({ limit: z.int().min(1).max(50).default(10) }))
    .output(zFlakyScans)
    .query(({ ctx, input }) => listFlakyScans({ db: ctx.db, actor: ctx.user, ruleId: input.ruleId, limit: input.limit })),

  /** "Scan now": queues the rule's scan at this minute (once per minute). */
  scanNow: memberProcedure
    .input(zRuleIdInput)
    .output(z.object({ ruleId: z.string(), at: z.string() }))
    .mutation(({ ctx, input }) => requestFlakyScan({ db: ctx.db, actor: ctx.user, ruleId: input.ruleId })),

  /** Changes nothing; a mutation because the unsaved rule travels in the body. */
  dryRun: memberProcedure.input(zDryRunInput).output(zDryRun).mutation(({ ctx, input }) => dryRunTriggerRule({ db: ctx.db, actor: ctx.user, input })),
});
