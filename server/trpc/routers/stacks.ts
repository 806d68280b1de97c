import { z } from "zod";
import { archiveStack, createStack, restoreStack, updateStack } from "@/server/domain/stacks/stacks-service";
import { diffStackVersions, getStack, getStackVersionSpec, listStacks, listStackOptions } from "@/server/domain/stacks/stacks-presenter";
import { previewSources, previewStack } from "@/server/domain/evaluation/stack-preview";
import {
  zCreateStackInput,
  zStackDiffInput,
  zStackIdInput,
  zStackPreviewInput,
  zUpdateStackInput,
} from "@/server/domain/stacks/schemas";
import { memberProcedure, repositoryProcedure, router } from "../init";
import { zCreatedStack, zUpdatedStack, zStackArchived, zStackDetail, zStackList, zStackOptions, zStackVersionDiff } from "../outputs/stacks";
import { zStackSpec } from "@/server/domain/stacks/spec-schema";
import { zPreviewSources, zStackPreview } from "../outputs/evaluation";

// Stacks are global: everyone with a role on some repository reads them; who may change one depends on the trigger
// rules that use it (server/domain/stacks/permissions.ts), so the services check it.

export const stacksRouter = router({
  list: memberProcedure.output(zStackList).query(({ ctx }) => listStacks({ db: ctx.db, actor: ctx.user })),

  byId: memberProcedure.input(zStackIdInput).output(zStackDetail).query(({ ctx, input }) => getStack({ db: ctx.db, actor: ctx.user, stackId: input.stackId })),

  /** Stacks a trigger rule may use (not archived). */
  options: memberProcedure.output(zStackOptions).query(({ ctx }) => listStackOptions(ctx.db)),

  versionSpec: memberProcedure
    .input(zStackIdInput.extend({ version: z.int().positive() }))
    .output(zStackSpec)
    .query(({ ctx, input }) => getStackVersionSpec(ctx.db, input.stackId, input.version)),

  diff: memberProcedure.input(zStackDiffInput).output(zStackVersionDiff).query(({ ctx, input }) => diffStackVersions({ db: ctx.db, ...input })),

  create: memberProcedure.input(zCreateStackInput).output(zCreatedStack).mutation(({ ctx, input }) => createStack({ db: ctx.db, actor: ctx.user, input })),

  update: memberProcedure.input(zUpdateStackInput).output(zUpdatedStack).mutation(({ ctx, input }) => updateStack({ db: ctx.db, actor: ctx.user, input })),

  archive: memberProcedure
    .input(zStackIdInput)
    .output(zStackArchived)
    .mutation(({ ctx, input }) => archiveStack({ db: ctx.db, actor: ctx.user, stackId: input.stackId, now: ctx.now() })),

  restore: memberProcedure
    .input(zStackIdInput)
    .output(zStackArchived)
    .mutation(({ ctx, input }) => restoreStack({ db: ctx.db, actor: ctx.user, stackId: input.stackId })),

  /** Recent runs and failed jobs of a repository, to preview a stack against. */
  previewSources: repositoryProcedure("viewer").output(zPreviewSources).query(({ ctx }) => previewSources({ db: ctx.db, repositoryId: ctx.repositoryId })),

  /** Changes nothing; a mutation because an unsaved spec is too large for a GET URL. */
  preview: repositoryProcedure("viewer")
    .input(zStackPreviewInput)
    .output(zStackPreview)
    .mutation(({ ctx, input }) => previewStack({ db: ctx.db, input, now: ctx.now() })),
});
