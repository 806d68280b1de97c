import { z } from "zod";
import { resolve } from "node:path";
import { dispatchRun } from "@/server/domain/runs/dispatch";
import { forkRun } from "@/server/domain/runs/fork";
import { resumeRun } from "@/server/domain/runs/resume";
import { retryRun } from "@/server/domain/runs/retry";
import { zTaskKind } from "@/server/domain/ci-events/enums";
import { getDispatchOptions } from "@/server/domain/runs/dispatch-options";
import { repositoryProcedure, runProcedure } from "../init";
import { auditActorOf } from "@/server/domain/actor";
import { dispatchManual, zManualDispatchInput } from "@/server/domain/use-cases/dispatch-manual";
import { env } from "@/server/env";
import { branchHead, type BranchHead } from "@/server/forges/local/repositories";
import { zManualDispatched } from "../outputs/manual-dispatch";
import { zDispatchOptions } from "../outputs/runs";

// The runs router's execution controls (dispatch, retry, resume, fork), kept in their own file
// and spread into runsRouter so the run-view procedures and these evolve without colliding.
// Each validates, requires the maintainer role on the run's repository, and calls the domain.

/** A branch of the local forge: refs/heads only, so a tag or a commit id is no branch. */
const localBranchHead: BranchHead = (fullName, branch) => branchHead(resolve(env.AIRLOCK_DATA_DIR), fullName, branch);

const zQueued = z.object({ runId: z.string(), status: z.literal("queued"), attemptNumber: z.number().int() });
const zDispatched = zQueued.extend({ taskKind: zTaskKind });
const zChild = z.object({ runId: z.string(), number: z.number().int(), parentRunId: z.string() });

export const runExecutionProcedures = {
  /**
   * "Diagnose with agent" / "Attempt repair": a suggested run is queued; with `taskKind`, as a
   * run of that task with the repository's stack for it.
   */
  dispatch: runProcedure("maintainer")
    .input(z.object({ taskKind: zTaskKind.optional() }))
    .output(zDispatched)
    .mutation(({ ctx, input }) => dispatchRun({ db: ctx.db, actor: auditActorOf(ctx.user), runId: input.runId, taskKind: input.taskKind, now: ctx.now() })),

  /**
   * Manual dispatch: a maintainer starts a run on a pull request or branch with a task kind, a
   * stack and instructions; a repeat of one requestId returns the same run.
   */
  dispatchManual: repositoryProcedure("maintainer")
    .input(zManualDispatchInput)
    .output(zManualDispatched)
    .mutation(({ ctx, input }) => {
      const { repositoryId: _repositoryId, ...request } = input;
      return dispatchManual({ db: ctx.db, actor: { userId: ctx.user.id, label: ctx.user.email }, role: ctx.role, repositoryId: ctx.repositoryId, input: request, localBranchHead, now: ctx.now() });
    }),

  /** What a person may dispatch on a repository: its stacks per task kind, the stacks, and why not. */
  dispatchOptions: repositoryProcedure("viewer").output(zDispatchOptions).query(({ ctx }) => getDispatchOptions({ db: ctx.db, repositoryId: ctx.repositoryId, role: ctx.role })),

  /** A new attempt of a failed, cancelled or escalated run, within the stack's retry bound. */
  retry: runProcedure("maintainer")
    .input(z.object({ reason: z.string().trim().max(500).optional() }))
    .output(zQueued)
    .mutation(({ ctx, input }) => retryRun({ db: ctx.db, actor: auditActorOf(ctx.user), runId: input.runId, reason: input.reason, now: ctx.now() })),

  /** A child run continuing this one, with optional instructions. */
  resume: runProcedure("maintainer")
    .input(z.object({ instructions: z.string().trim().max(20_000).optional() }))
    .output(zChild)
    .mutation(({ ctx, input }) =>
      resumeRun({ db: ctx.db, actor: auditActorOf(ctx.user), runId: input.runId, instructions: input.instructions, now: ctx.now() }),
    ),

  /** A child run with an edited prompt and/or another stack. */
  fork: runProcedure("maintainer")
    .input(z.object({ prompt: z.string().max(100_000).optional(), stackId: z.string().min(1).max(100).optional() }))
    .output(zChild)
    .mutation(({ ctx, input }) =>
      forkRun({ db: ctx.db, actor: auditActorOf(ctx.user), runId: input.runId, prompt: input.prompt, stackId: input.stackId, now: ctx.now() }),
    ),
};
