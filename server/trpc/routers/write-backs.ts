import { z } from "zod";
import { requestDiagnosisComment } from "@/server/domain/writebacks/diagnosis-comment";
import { requestRerun, zRerunScope } from "@/server/domain/writebacks/rerun";
import { requestReview, zReviewChoice } from "@/server/domain/writebacks/review";
import { maxPrNotesChars, requestOpenPr } from "@/server/domain/writebacks/open-pr";
import { requestPublishRelease } from "@/server/domain/writebacks/publish-release";
import { AppError } from "@/server/errors";
import { router, runProcedure } from "../init";
import { zWriteBackRequested } from "../outputs/write-backs";

// Write-backs a person asks for from the run page: validate, require the maintainer role on the
// run's repository (runProcedure), call the domain. The change gate decides whether a person
// must approve; an approving person is never the request itself.

const actorOf = (user: { id: string; email: string }) => ({ userId: user.id, label: user.email });

const zRequested = zWriteBackRequested;

export const writeBacksRouter = router({
  /** "Post diagnosis as a comment": the diagnosis summary on the run's PR, through the change gate. */
  requestDiagnosisComment: runProcedure("maintainer")
    .output(zRequested)
    .mutation(async ({ ctx, input }) => {
      const asked = await requestDiagnosisComment({ db: ctx.db, runId: input.runId, by: actorOf(ctx.user), now: ctx.now() });
      if (asked.kind === "approval") return { kind: "approval" as const, approvalId: asked.approvalId, reason: asked.reason };
      if (asked.kind === "direct") return { kind: "direct" as const, writeBackId: asked.writeBackId, reason: asked.reason };
      // A person's request either asks or throws; anything else is a bug, not an answer.
      throw new AppError("INTERNAL", `unexpected diagnosis comment outcome ${asked.kind}`);
    }),
  /** "Post review": the run's findings as a review of its PR (comment, request changes, approve), through the change gate. */
  requestReview: runProcedure("maintainer")
    .input(z.object({ choice: zReviewChoice }))
    .output(zRequested)
    .mutation(async ({ ctx, input }) => {
      const asked = await requestReview({ db: ctx.db, runId: input.runId, by: actorOf(ctx.user), role: ctx.role, choice: input.choice, now: ctx.now() });
      return asked.kind === "approval" ? { kind: "approval" as const, approvalId: asked.approvalId, reason: asked.reason } : { kind: "direct" as const, writeBackId: asked.writeBackId, reason: asked.reason };
    }),
  /** "Rerun check": the run's check run again (GitHub: its failed jobs, or the failed job alone; local: the whole check), through the change gate. */
  requestRerun: runProcedure("maintainer")
    .input(z.object({ scope: zRerunScope }))
    .output(zRequested)
    .mutation(async ({ ctx, input }) => {
      const asked = await requestRerun({ db: ctx.db, runId: input.runId, by: actorOf(ctx.user), role: ctx.role, scope: input.scope, now: ctx.now() });
      return asked.kind === "approval" ? { kind: "approval" as const, approvalId: asked.approvalId, reason: asked.reason } : { kind: "direct" as const, writeBackId: asked.writeBackId, reason: asked.reason };
    }),

  /** "Open a pull request": the run's patch on a new branch and a PR from it, through the change gate. */
  requestOpenPr: runProcedure("maintainer")
    .input(z.object({ branch: z.string().trim().max(100).optional(), title: z.string().trim().max(400).optional(), notes: z.string().max(maxPrNotesChars).optional() }))
    .output(zRequested)
    .mutation(async ({ ctx, input }) => {
      const asked = await requestOpenPr({ db: ctx.db, runId: input.runId, by: actorOf(ctx.user), input, now: ctx.now() });
      if (asked.kind === "approval") return { kind: "approval" as const, approvalId: asked.approvalId, reason: asked.reason };
      if (asked.kind === "direct") return { kind: "direct" as const, writeBackId: asked.writeBackId, reason: asked.reason };
      throw new AppError("INTERNAL", `unexpected open PR outcome ${asked.kind}`);
    }),

  /** "Publish release": the approved artifact under the run's tag, with its readiness report shown; always a person. */
  requestPublishRelease: runProcedure("maintainer")
    .input(z.object({ tag: z.string().trim().max(100).optional(), artifactId: z.string().max(100).optional(), name: z.string().trim().max(200).optional(), notes: z.string().max(8_000).optional() }))
    .output(zRequested)
    .mutation(async ({ ctx, input }) => {
      const asked = await requestPublishRelease({ db: ctx.db, runId: input.runId, by: actorOf(ctx.user), input, now: ctx.now() });
      if (asked.kind === "approval") return { kind: "approval" as const, approvalId: asked.approvalId, reason: asked.reason };
      // The change gate never exempts a release; an answer without an approval is a bug.
      throw new AppError("INTERNAL", `unexpected publish release outcome ${asked.kind}`);
    }),
});
