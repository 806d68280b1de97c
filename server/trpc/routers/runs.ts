import { z } from "zod";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { attachContext } from "@/server/domain/runs/attach-context";
import { cancelRun } from "@/server/domain/run-engine/cancel";
import { getRunArtifact, getRunDetail, listRunEvents, searchRunEvents } from "@/server/domain/use-cases/run-detail";
import { countRunsByStatus, listRuns, getRunFilterOptions, zRunListFilter, zRunListInput } from "@/server/domain/runs/list";
import { zAttachContextInput } from "@/server/domain/runs/schemas";
import { protectedProcedure, requireRepositoryRole, router, runProcedure } from "../init";
import { runExecutionProcedures } from "./run-execution";
import { auditActorOf } from "@/server/domain/actor";
import { zCancelled, zEventSearch, zRunArtifact, zRunCounts, zRunDetail, zRunEvents, zRunFilterOptions, zRunListPage } from "../outputs/runs";

const zSeq = z.number().int().positive();

export const runsRouter = router({
  ...runExecutionProcedures,

  list: protectedProcedure.input(zRunListInput).output(zRunListPage).query(async ({ ctx, input }) => {
    if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
    const repositoryIds = await visibleRepositoryIds(ctx.db, ctx.user);
    return listRuns({ db: ctx.db, repositoryIds, input });
  }),

  counts: protectedProcedure.input(zRunListFilter.omit({ status: true })).output(zRunCounts).query(async ({ ctx, input }) => {
    if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
    const repositoryIds = await visibleRepositoryIds(ctx.db, ctx.user);
    return countRunsByStatus({ db: ctx.db, repositoryIds, filter: input });
  }),

  filterOptions: protectedProcedure.output(zRunFilterOptions).query(async ({ ctx }) =>
    getRunFilterOptions({ db: ctx.db, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user) }),
  ),

  byId: runProcedure("viewer").output(zRunDetail).query(({ ctx, input }) => getRunDetail({ db: ctx.db, runId: input.runId, viewerRole: ctx.role, viewerId: ctx.user.id })),

  events: runProcedure("viewer")
    .input(z.object({ beforeSeq: zSeq.optional(), afterSeq: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(1000).default(200) }))
    .output(zRunEvents)
    .query(({ ctx, input }) =>
      listRunEvents({ db: ctx.db, runId: input.runId, beforeSeq: input.beforeSeq, afterSeq: input.afterSeq, limit: input.limit }),
    ),

  searchEvents: runProcedure("viewer")
    .input(z.object({ query: z.string().trim().min(1).max(200) }))
    .output(zEventSearch)
    .query(({ ctx, input }) => searchRunEvents({ db: ctx.db, runId: input.runId, query: input.query })),

  artifact: runProcedure("viewer")
    .input(z.object({ artifactId: z.string().min(1).max(100) }))
    .output(zRunArtifact)
    .query(({ ctx, input }) => getRunArtifact({ db: ctx.db, runId: input.runId, artifactId: input.artifactId })),

  cancel: runProcedure("maintainer")
    .input(z.object({ reason: z.string().trim().max(500).optional() }))
    .output(zCancelled)
    .mutation(({ ctx, input }) =>
      cancelRun({
        db: ctx.db,
        actor: auditActorOf(ctx.user),
        runId: input.runId,
        reason: input.reason,
        now: ctx.now(),
      }),
    ),

  /** "Attach context": a note, link or file excerpt becomes a redacted transcript event. */
  attachContext: runProcedure("maintainer")
    .input(zAttachContextInput)
    .output(z.object({ runId: z.string(), seq: z.number().int(), attachmentId: z.string(), redactions: z.number().int(), duplicate: z.boolean() }))
    .mutation(({ ctx, input }) => {
      const { runId, ...attachment } = input;
      return attachContext({ db: ctx.db, actor: auditActorOf(ctx.user), runId, input: attachment });
    }),
});
