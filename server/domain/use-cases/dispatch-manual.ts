import { z } from "zod";
import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import type { RepoRole, RunStatus } from "@/server/db/generated/enums";
import { roleAtLeast } from "@/server/auth/roles";
import { AppError } from "@/server/errors";
import type { ManualEvent } from "@/server/domain/ci-events/ci-event";
import { zTaskKind } from "@/server/domain/ci-events/enums";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { recordAudit, type AuditActor } from "../audit";
import { refuseIfDisabled } from "../runs/disabled";
import { taskStacks } from "../triggers/task-stacks";
import type { BranchHead } from "@/server/forges/local/repositories";

// Manual dispatch (issue 19): a maintainer starts a run by hand on a pull request or a branch of
// the repository, choosing the task kind, the stack and extra instructions. It is a `manual` CI
// event through the one path every trigger takes (ingestCiEvent -> evaluateDelivery -> the
// repository's manual trigger rule for that task -> a run), evaluated at once so the person lands
// on the run; the queued delivery.evaluate job then finds the delivery processed. Trust is the
// path's own: a fork's pull request stays a fork (untrusted pool), and evaluation reads the
// person's role again. The request id is the delivery id: a double submit is one delivery, one run.

export const MANUAL_INSTRUCTIONS_MAX = 10_000;

export const zManualDispatchTarget = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("pull_request"), number: z.number().int().positive().max(2_147_483_647) }),
  // A git ref name: no spaces, no "..", no leading "-" (refs are passed to git).
  z.object({ kind: z.literal("branch"), name: z.string().trim().min(1).max(255).regex(/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/, "not a branch name") }),
]);
export type ManualDispatchTarget = z.infer<typeof zManualDispatchTarget>;

export const zManualDispatchInput = z.object({
  /** The dialog's id for this submission (a UUID made when it opens): a repeat is the same run. */
  requestId: z.uuid(),
  target: zManualDispatchTarget,
  taskKind: zTaskKind,
  /** Another stack than the repository's for this task; absent: the rule's stack. */
  stackId: z.string().min(1).max(100).optional(),
  /** Given to the agent as written (not trimmed); blank: none. */
  instructions: z.string().max(MANUAL_INSTRUCTIONS_MAX).optional(),
});
export type ManualDispatchInput = z.infer<typeof zManualDispatchInput>;

export type ManualDispatchResult = {
  runId: string;
  number: number;
  status: RunStatus;
  /** True when this request had already made the run (a double submit). */
  repeated: boolean;
};

export async function dispatchManual(opts: {
  db: Db;
  actor: AuditActor & { userId: string };
  role: RepoRole;
  repositoryId: string;
  input: ManualDispatchInput;
  localBranchHead: BranchHead;
  now?: Date;
}): Promise<ManualDispatchResult> {
  const { db, input } = opts;
  const now = opts.now ?? new Date();
  // The same sentence the dialog and dispatchOptions show (runs/dispatch-options.ts).
  if (!roleAtLeast(opts.role, "maintainer")) throw new AppError("FORBIDDEN", `This needs the maintainer role on the repository; you are ${opts.role}`, { reason: "forbidden" });
  const deliveryId = `manual-${input.requestId}`;
  const earlier = await findRequest(db, deliveryId);
  if (earlier) {
    if (earlier.userId !== opts.actor.userId || earlier.repositoryId !== opts.repositoryId) {
      throw new AppError("CONFLICT", "This request id belongs to another request", { reason: "request_id_taken" });
    }
    return settle(db, { deliveryId, repositoryId: opts.repositoryId, now, repeated: true });
  }

  const repository = await db.repository.findUniqueOrThrow({ where: { id: opts.repositoryId } });
  refuseIfDisabled(repository, "dispatching its runs");
  const byTask = await taskStacks(db, repository.id);
  const chosen = byTask[input.taskKind];
  if (!chosen.stack) throw new AppError("CONFLICT", chosen.reason, { reason: "no_task_stack" });
  const stack = input.stackId ? await db.agentStack.findUnique({ where: { id: input.stackId }, select: { id: true, name: true, version: true, archivedAt: true } }) : chosen.stack;
  if (!stack) throw new AppError("NOT_FOUND", "No such stack", { reason: "stack_not_found" });
  if ("archivedAt" in stack && stack.archivedAt) throw new AppError("CONFLICT", `Stack ${stack.name} is archived`, { reason: "stack_archived" });

  const head = await resolveTarget(db, { id: repository.id, fullName: repository.fullName, forge: repository.forge }, input.target, opts.localBranchHead);
  const instructions = input.instructions !== undefined && input.instructions.trim() !== "" ? input.instructions : undefined;
  const event: ManualEvent = {
    type: "manual",
    origin: "airlock",
    repository: { fullName: repository.fullName, cloneUrl: repository.cloneUrl, htmlUrl: null, defaultBranch: repository.defaultBranch, visibility: repository.visibility },
    actor: { login: opts.actor.label, type: "user", association: null, airlockRole: opts.role },
    taskKind: input.taskKind,
    // The rule the dialog showed for this task: precedence has nothing to choose.
    ruleId: chosen.rule.id,
    pullRequestNumber: head.pullRequestNumber,
    headSha: head.sha,
    headBranch: head.branch,
    workflowName: null,
    jobName: null,
    step: null,
    requestId: input.requestId,
    userId: opts.actor.userId,
    ...(stack.id !== chosen.stack.id ? { stackId: stack.id } : {}),
    ...(instructions !== undefined ? { instructions } : {}),
  };

  const recorded = await transaction(db, "dispatchManual", async (tx) => {
    const ingested = await ingestCiEvent({ db: tx, event, deliveryId, now });
    // A concurrent double submit: the other request recorded it (and its audit entry).
    if (ingested.status !== "accepted") return false;
    await recordAudit(tx, {
      actor: opts.actor,
      action: "run.dispatch_manual",
      objectType: "WebhookDelivery",
      objectId: deliveryId,
      repositoryId: repository.id,
      detail: {
        target: input.target,
        headSha: head.sha,
        taskKind: input.taskKind,
        stack: { id: stack.id, name: stack.name, version: stack.version },
        ruleId: chosen.rule.id,
        instructions: instructions ?? null,
      },
    });
    return true;
  });
  return settle(db, { deliveryId, repositoryId: repository.id, now, repeated: !recorded });
}

async function resolveTarget(db: Db, repository: { id: string; fullName: string; forge: "local" | "github" }, target: ManualDispatchTarget, localBranchHead: BranchHead) {
  if (target.kind === "pull_request") {
    const pr = await db.pullRequest.findUnique({ where: { repositoryId_number: { repositoryId: repository.id, number: target.number } }, select: { headSha: true, headRef: true, state: true } });
    if (!pr) throw new AppError("NOT_FOUND", `Airlock has no record of pull request #${target.number} in ${repository.fullName}`, { reason: "pull_request_not_found" });
    if (pr.state !== "open") throw new AppError("CONFLICT", `Pull request #${target.number} is ${pr.state}`, { reason: "pull_request_not_open" });
    return { sha: pr.headSha, branch: pr.headRef, pullRequestNumber: target.number };
  }
  // The local forge is asked; a GitHub branch is the newest head Airlock has recorded a check of.
  const sha =
    repository.forge === "local"
      ? await localBranchHead(repository.fullName, target.name)
      : ((await db.pipeline.findFirst({ where: { repositoryId: repository.id, headBranch: target.name }, orderBy: { createdAt: "desc" }, select: { headSha: true } }))?.headSha ?? null);
  if (!sha) {
    const why = repository.forge === "local" ? `${repository.fullName} has no branch ${target.name}` : `Airlock has recorded no check on branch ${target.name} of ${repository.fullName}`;
    throw new AppError("NOT_FOUND", why, { reason: "branch_not_found" });
  }
  return { sha, branch: target.name, pullRequestNumber: null };
}

async function findRequest(db: Db, deliveryId: string) {
  const row = await db.webhookDelivery.findUnique({ where: { deliveryId }, select: { payload: true } });
  if (!row) return null;
  const parsed = z.object({ ciEvent: z.object({ userId: z.string().optional(), repository: z.object({ fullName: z.string() }) }) }).safeParse(row.payload);
  const fullName = parsed.success ? parsed.data.ciEvent.repository.fullName : null;
  const repository = fullName ? await db.repository.findUnique({ where: { fullName }, select: { id: true } }) : null;
  return { userId: parsed.success ? (parsed.data.ciEvent.userId ?? null) : null, repositoryId: repository?.id ?? null };
}

/** Evaluate the request's delivery (a no-op once processed) and return the run it made, or why none. */
async function settle(db: Db, opts: { deliveryId: string; repositoryId: string; now: Date; repeated: boolean }): Promise<ManualDispatchResult> {
  const evaluation = await evaluateDelivery({ db, deliveryId: opts.deliveryId, now: opts.now });
  const made = evaluation.created[0] ?? evaluation.duplicates[0];
  const run = made
    ? await db.agentDispatchRun.findUniqueOrThrow({ where: { id: made.runId }, select: { id: true, number: true, status: true } })
    : await db.agentDispatchRun.findFirst({
        where: { repositoryId: opts.repositoryId, contextBundle: { path: ["source", "deliveryId"], equals: opts.deliveryId } },
        select: { id: true, number: true, status: true },
      });
  if (!run) {
    const delivery = await db.webhookDelivery.findUnique({ where: { deliveryId: opts.deliveryId }, select: { detail: true } });
    const why = evaluation.refused[0] ?? delivery?.detail ?? evaluation.detail;
    throw new AppError("CONFLICT", `No run was started: ${why}`, { reason: "not_dispatched" });
  }
  return { runId: run.id, number: run.number, status: run.status, repeated: opts.repeated };
}
