import { z } from "zod";
import { resolve } from "node:path";
import { visibleRepositoryIds } from "@/server/auth/roles";
import { approveApproval, rejectWriteBack } from "@/server/domain/run-engine/decide-approval";
import { overridePushProtection } from "@/server/domain/approvals/push-protection";
import { approvalRepository, countApprovals, getApprovalDetail, listApprovals, zApprovalListInput } from "@/server/domain/approvals/queue";
import { twoPersonRefusal } from "@/server/domain/runs/causers";
import { retryWriteBack } from "@/server/domain/writebacks/execute";
import { env } from "@/server/env";
import { AppError } from "@/server/errors";
import { branchHead, type BranchHead } from "@/server/forges/local/repositories";
import { protectedProcedure, requireRepositoryRole, router } from "../init";
import { auditActorOf } from "@/server/domain/actor";
import { zApprovalCounts, zApprovalDetail, zApprovalList, zApproved, zPushProtectionOverridden, zRejected } from "../outputs/approvals";
import { zRetriedWriteBack } from "../outputs/write-backs";

// The approvals gate's procedures: validate, authorise (viewer to read, maintainer to decide;
// the domain re-checks inside its transaction), call the domain.

const zApprovalId = z.object({ approvalId: z.string().min(1).max(100) });

/** The local forge's branch heads (GitHub heads come from the PullRequest rows webhooks keep). */
const localBranchHead: BranchHead = (repository, branch) => branchHead(resolve(env.AIRLOCK_DATA_DIR), repository, branch);

export const approvalsRouter = router({
  list: protectedProcedure
    .input(zApprovalListInput)
    .output(zApprovalList)
    .query(async ({ ctx, input }) => {
      if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
      return listApprovals({ db: ctx.db, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user), input, now: ctx.now() });
    }),

  counts: protectedProcedure
    .input(zApprovalListInput.omit({ limit: true, status: true }))
    .output(zApprovalCounts)
    .query(async ({ ctx, input }) => {
      if (input.repositoryId) await requireRepositoryRole(ctx, input.repositoryId, "viewer");
      return countApprovals({ db: ctx.db, repositoryIds: await visibleRepositoryIds(ctx.db, ctx.user), input, now: ctx.now() });
    }),

  byId: protectedProcedure.input(zApprovalId).output(zApprovalDetail).query(async ({ ctx, input }) => {
    const role = await requireRepositoryRole(ctx, await approvalRepository(ctx.db, input.approvalId), "viewer");
    const detail = await getApprovalDetail({ db: ctx.db, approvalId: input.approvalId });
    const twoPerson = await twoPersonRefusal(ctx.db, { run: detail.run, twoPersonRule: detail.run.repository.twoPersonRule, userId: ctx.user.id });
    return { ...detail, viewerRole: role, viewerTwoPersonRefusal: twoPerson?.message ?? null };
  }),

  approve: protectedProcedure
    .input(zApprovalId.extend({ artifactDigest: z.string().max(100).nullable(), headSha: z.string().max(64).nullable() }))
    .output(zApproved)
    .mutation(async ({ ctx, input }) => {
      await requireRepositoryRole(ctx, await approvalRepository(ctx.db, input.approvalId), "maintainer");
      return approveApproval({ db: ctx.db, actor: ctx.user, approvalId: input.approvalId, artifactDigest: input.artifactDigest, headSha: input.headSha, branchHead: localBranchHead, now: ctx.now() });
    }),

  reject: protectedProcedure
    .input(zApprovalId.extend({ reason: z.string().trim().min(1, "A rejection needs a reason").max(2000) }))
    .output(zRejected)
    .mutation(async ({ ctx, input }) => {
      await requireRepositoryRole(ctx, await approvalRepository(ctx.db, input.approvalId), "maintainer");
      return rejectWriteBack({ db: ctx.db, actor: ctx.user, approvalId: input.approvalId, reason: input.reason, now: ctx.now() });
    }),

  /** An admin lifts push protection for a patch with secrets, with a reason (audited, shown). */
  overridePushProtection: protectedProcedure
    .input(zApprovalId.extend({ reason: z.string().trim().min(1, "An override needs a reason").max(2000) }))
    .output(zPushProtectionOverridden)
    .mutation(async ({ ctx, input }) => {
      await requireRepositoryRole(ctx, await approvalRepository(ctx.db, input.approvalId), ctx.user.isAdmin ? "viewer" : "admin");
      return overridePushProtection({ db: ctx.db, actor: ctx.user, approvalId: input.approvalId, reason: input.reason, now: ctx.now() });
    }),

  retryWriteBack: protectedProcedure.input(z.object({ writeBackId: z.string().min(1).max(100) })).output(zRetriedWriteBack).mutation(async ({ ctx, input }) => {
    const wb = await ctx.db.writeBack.findUnique({ where: { id: input.writeBackId }, select: { run: { select: { repositoryId: true } } } });
    if (!wb) throw new AppError("NOT_FOUND", "No such write-back.");
    const role = await requireRepositoryRole(ctx, wb.run.repositoryId, "maintainer");
    return retryWriteBack({ db: ctx.db, actor: auditActorOf(ctx.user), writeBackId: input.writeBackId, role, now: ctx.now() });
  }),
});
