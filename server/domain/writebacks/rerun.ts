import { z } from "zod";
import type { Db, Prisma, RepoRole, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { CheckRerunEvent } from "@/server/domain/ci-events/ci-event";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { AppError } from "@/server/errors";
import type { CheckConclusion } from "@/server/db/generated/enums";
import type { Forge, ForgeWriteBackRequest, ForgeWriteBackResult } from "@/server/forges/types";
import { enqueue } from "@/server/queue/enqueue";
import { type AuditActor, recordAudit } from "../audit";
import { requestWriteBack, type RequestWriteBackResult } from "../approvals/request-write-back";
import { type RerunPlan, zRerunPlan } from "../approvals/schemas";
import { lockRunOrThrow } from "../runs/transition";
import { isUnfinishedRun } from "../runs/lifecycle";

// The rerun write-back: the check a run was about, run again, through the change gate (a fork's
// or an unplaced run's rerun always waits for a person). On GitHub it reruns the workflow run's
// failed jobs (POST .../actions/runs/{id}/rerun-failed-jobs), or only the run's failed job
// (POST .../actions/jobs/{id}/rerun: the nearest GitHub comes to rerunning from the failed step);
// on the local forge it runs the local CI again on the branch, which always reruns the whole
// check. Either way a new Pipeline is linked to the run (`triggeredByRunId`). When the rerun's
// result is in (the local CI finishes inside the write-back; GitHub's new attempt is read by the
// rerun.settle job until it completes), a `check_rerun` event is emitted
// with the spec's dedupe key (original run + approved artifact digest + target check), in the
// transaction that records the write-back: a retried or raced execution records nothing twice,
// so it is emitted once, and a repeat would be dropped by its dedupe key anyway. The event takes
// the original run's origin (evaluation/origin.ts), so a fork's rerun stays untrusted.

export const zRerunScope = z.enum(["failed_jobs", "failed_job"]);
export type RerunScope = z.infer<typeof zRerunScope>;

const rerunRunSelect = {
  id: true,
  number: true,
  status: true,
  repositoryId: true,
  headSha: true,
  headBranch: true,
  repository: { select: { forge: true, fullName: true, checkCommand: true } },
  pullRequest: { select: { number: true } },
  pipeline: { select: { id: true, externalId: true, checkName: true, workflowName: true, headSha: true, headBranch: true, conclusion: true } },
  job: { select: { externalId: true, name: true, step: true, conclusion: true } },
} satisfies Prisma.AgentDispatchRunSelect;

type RunForRerun = Prisma.AgentDispatchRunGetPayload<{ select: typeof rerunRunSelect }>;

const isGithubId = (s: string | null | undefined) => Boolean(s && /^[1-9][0-9]{0,18}$/.test(s));

/** Why the run's check cannot be rerun (null: it can). */
export function rerunRefusal(run: RunForRerun): string | null {
  if (!run.pipeline) return "The run is not about a check, so there is nothing to rerun.";
  if (isUnfinishedRun(run.status)) return "A check is rerun once the run has finished.";
  if (run.repository.forge === "local" && !run.repository.checkCommand) return "The repository has no check command for the local CI to run.";
  if (run.repository.forge === "github" && !isGithubId(run.pipeline.externalId)) return `The check ${run.pipeline.checkName} is not a GitHub Actions workflow run Airlock can rerun.`;
  return null;
}

/** Whether the forge can rerun just the failed job, and why not. */
export function stepRerunOf(run: RunForRerun): { supported: boolean; why: string } {
  if (run.repository.forge === "local") return { supported: false, why: "The local CI reruns the whole check: it cannot rerun a single step." };
  if (!run.job || !isGithubId(run.job.externalId)) return { supported: false, why: "The run names no failed GitHub job, so only every failed job of the workflow run can be rerun." };
  return { supported: true, why: `GitHub reruns the failed job ${run.job.name} alone (it cannot start a job from a step).` };
}

/** What will be rerun, in data and in words, as the approver sees it. */
export function rerunPlanOf(run: RunForRerun, opts: { scope: RerunScope; approvedArtifactDigest: string | null; requestedBy: string }): RerunPlan {
  const pipeline = run.pipeline;
  if (!pipeline) throw new AppError("PRECONDITION_FAILED", "The run is not about a check, so there is nothing to rerun.", { reason: "no_check" });
  const branch = pipeline.headBranch ?? run.headBranch;
  const base = {
    pipelineId: pipeline.id,
    checkName: pipeline.checkName,
    workflowName: pipeline.workflowName,
    externalRunId: pipeline.externalId,
    jobName: run.job?.name ?? null,
    step: run.job?.step ?? null,
    runAttempt: null,
    approvedArtifactDigest: opts.approvedArtifactDigest,
    headSha: pipeline.headSha,
    headBranch: branch,
    requestedBy: opts.requestedBy,
  };
  const after = opts.approvedArtifactDigest ? ` after the approved fix ${opts.approvedArtifactDigest.slice(0, 19)}…` : "";
  if (run.repository.forge === "local") {
    return { ...base, scope: "whole_check", jobExternalId: null, summary: `The local CI runs the whole check ${pipeline.checkName} again on ${branch ? `the tip of ${branch}` : "the default branch"}${after}. It cannot rerun a single step.` };
  }
  const step = stepRerunOf(run);
  if (opts.scope === "failed_job") {
    if (!step.supported || !run.job) throw new AppError("PRECONDITION_FAILED", step.why, { reason: "no_step_rerun" });
    return { ...base, scope: "failed_job", jobExternalId: run.job.externalId, summary: `GitHub reruns the failed job ${run.job.name} (job ${run.job.externalId}) of workflow run ${pipeline.externalId}${after}.` };
  }
  return { ...base, scope: "failed_jobs", jobExternalId: null, summary: `GitHub reruns every failed job of workflow run ${pipeline.externalId} (${pipeline.checkName})${after}.` };
}

/** The run's newest approved fix that reached the forge: its artifact digest keys the rerun. */
async function approvedFixOf(db: Db | Tx, runId: string): Promise<string | null> {
  const fix = await db.writeBack.findFirst({
    where: { runId, kind: { in: ["push_commits", "update_pr_branch"] }, outcome: "succeeded", artifactDigest: { not: null } },
    orderBy: { completedAt: "desc" },
    select: { artifactDigest: true },
  });
  return fix?.artifactDigest ?? null;
}

/** An earlier rerun of this run for the same fix that still stands. */
async function openRerunOf(db: Db | Tx, runId: string, digest: string | null): Promise<string | null> {
  const sameFix = (json: unknown) => (planOf(json)?.approvedArtifactDigest ?? null) === digest;
  const [approvals, writeBacks] = await Promise.all([
    db.approvalRequest.findMany({ where: { runId, action: "rerun_workflow", status: { in: ["pending", "approved", "executed"] } }, select: { id: true, status: true, presented: true }, take: 50 }),
    db.writeBack.findMany({ where: { runId, kind: "rerun_workflow", outcome: { in: ["pending", "succeeded"] } }, select: { id: true, outcome: true, target: true }, take: 50 }),
  ]);
  const writeBack = writeBacks.find((w) => sameFix(w.target));
  if (writeBack) return `write-back ${writeBack.id} ${writeBack.outcome}`;
  const approval = approvals.find((a) => sameFix(a.presented));
  if (approval) return `approval ${approval.id} ${approval.status}`;
  return null;
}

/** The verdict the run page shows beside "Rerun check", and whether the failed job alone can be. */
export async function rerunControl(db: Db, opts: { runId: string; role: RepoRole }): Promise<{ allowed: boolean; reason: string | null; step: { supported: boolean; why: string } }> {
  const run = await db.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: rerunRunSelect });
  if (!run) return { allowed: false, reason: "No such run.", step: { supported: false, why: "No such run." } };
  const refusal = rerunRefusal(run);
  const open = refusal ? null : await openRerunOf(db, run.id, await approvedFixOf(db, run.id));
  const reason = refusal ?? (open ? `Already asked for (${open}).` : null) ?? (opts.role === "viewer" ? "Rerunning a check needs the maintainer role." : null);
  return { allowed: reason === null, reason, step: stepRerunOf(run) };
}

/**
 * Asks the change gate for a rerun of the run's check by a person (`role` is theirs on the run's
 * repository). The run row is locked, so a double click makes one request.
 */
export function requestRerun(opts: { db: Db; runId: string; by: AuditActor; role: RepoRole; scope: RerunScope; now?: Date }): Promise<RequestWriteBackResult> {
  if (opts.role === "viewer") throw new AppError("FORBIDDEN", "Rerunning a check needs the maintainer role.", { reason: "repository_role" });
  const now = opts.now ?? new Date();
  return transaction(opts.db, "requestRerun", async (tx) => {
    await lockRunOrThrow(tx, opts.runId);
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: opts.runId }, select: rerunRunSelect });
    const refusal = rerunRefusal(run);
    if (refusal) throw new AppError("PRECONDITION_FAILED", refusal, { reason: "no_rerun" });
    const digest = await approvedFixOf(tx, run.id);
    const open = await openRerunOf(tx, run.id, digest);
    if (open) throw new AppError("CONFLICT", `This check's rerun was already asked for (${open}).`, { reason: "already_requested" });
    const plan = rerunPlanOf(run, { scope: opts.scope, approvedArtifactDigest: digest, requestedBy: opts.by.label });
    const github = run.repository.forge === "github";
    const asked = await requestWriteBack({
      db: tx,
      runId: run.id,
      action: "rerun_workflow",
      // GitHub's forge reruns the workflow run its check names; the local forge reruns the branch.
      target: { check: github ? plan.externalRunId : plan.checkName, ...(plan.headBranch ? { branch: plan.headBranch } : {}), ...(run.pullRequest ? { prNumber: run.pullRequest.number } : {}) },
      message: plan.summary,
      extra: { rerun: plan },
      now,
    });
    await recordAudit(tx, {
      actor: opts.by,
      action: "writeback.request",
      objectType: "AgentDispatchRun",
      objectId: run.id,
      repositoryId: run.repositoryId,
      detail: { action: "rerun_workflow", scope: plan.scope, check: plan.checkName, approvedArtifactDigest: digest, ...(asked.kind === "approval" ? { approvalId: asked.approvalId } : { writeBackId: asked.writeBackId }) },
    });
    return asked;
  });
}

const planOf = (target: unknown): RerunPlan | null => {
  const parsed = zRerunPlan.safeParse((target as { rerun?: unknown } | null)?.rerun);
  return parsed.success ? parsed.data : null;
};

/** The forge request's rerun fields (execute.ts requestOf): the one failed job, and the pinned attempt. */
export function rerunRequestOf(wb: { kind: string; target: unknown }): Pick<ForgeWriteBackRequest, "rerunJobId" | "rerunAttemptBefore"> {
  if (wb.kind !== "rerun_workflow") return {};
  const plan = planOf(wb.target);
  if (!plan) return {};
  return { ...(plan.scope === "failed_job" && plan.jobExternalId ? { rerunJobId: plan.jobExternalId } : {}), ...(plan.runAttempt !== null ? { rerunAttemptBefore: plan.runAttempt } : {}) };
}

/**
 * GitHub reruns carry no marker: the workflow run's attempt is read and written to the pending
 * WriteBack before the rerun is asked for, so after a crash a later attempt is known to be this
 * rerun (and not asked for twice), finished or not. Returns the request with the pinned attempt.
 */
export async function pinRerunAttempt(opts: { db: Db; forge: Forge; wb: { id: string; kind: string; target: unknown }; req: ForgeWriteBackRequest }): Promise<ForgeWriteBackRequest> {
  if (opts.wb.kind !== "rerun_workflow" || opts.req.rerunAttemptBefore !== undefined || !opts.forge.workflowRun) return opts.req;
  const plan = planOf(opts.wb.target);
  if (!plan) return opts.req;
  const attempt = (await opts.forge.workflowRun(opts.req.target.repository, plan.externalRunId))?.attempt ?? null;
  if (attempt === null) return opts.req;
  const target = { ...(opts.wb.target as Record<string, unknown>), rerun: { ...plan, runAttempt: attempt } };
  await opts.db.writeBack.updateMany({ where: { id: opts.wb.id, outcome: "pending" }, data: { target: target as Prisma.InputJsonValue } });
  return { ...opts.req, rerunAttemptBefore: attempt };
}

/**
 * In the transaction that records a succeeded rerun: the new Pipeline linked to the run (the
 * local CI made it; for GitHub it is made here, queued, for the workflow run's new attempt), and,
 * once its result is in, the check_rerun event. Returns the linked pipeline's id.
 */
export async function recordRerun(tx: Tx, opts: { wb: { id: string; runId: string; approvalId: string | null; approvedBy: string | null; target: unknown }; forge: string; result: ForgeWriteBackResult; now: Date }): Promise<string | null> {
  const plan = planOf(opts.wb.target);
  if (!plan) return null;
  const run = await tx.agentDispatchRun.findUniqueOrThrow({
    where: { id: opts.wb.runId },
    select: { id: true, repositoryId: true, pullRequestId: true, pullRequest: { select: { number: true } }, repository: { select: { fullName: true, cloneUrl: true, defaultBranch: true, visibility: true } } },
  });
  let pipeline: { id: string; headSha: string; headBranch: string | null; status: string } | null = null;
  if (opts.forge === "local") {
    pipeline = await tx.pipeline.findFirst({ where: { repositoryId: run.repositoryId, externalId: opts.result.externalRef, triggeredByRunId: run.id }, select: { id: true, headSha: true, headBranch: true, status: true } });
  } else {
    const original = await tx.pipeline.findUnique({ where: { id: plan.pipelineId }, select: { url: true } });
    const externalId = opts.result.externalRef.includes("#") ? opts.result.externalRef : `${opts.result.externalRef}#rerun-${opts.wb.id}`;
    pipeline = await tx.pipeline.upsert({
      where: { repositoryId_externalId: { repositoryId: run.repositoryId, externalId } },
      create: {
        repositoryId: run.repositoryId,
        pullRequestId: run.pullRequestId,
        workflowName: plan.workflowName ?? plan.checkName,
        checkName: plan.checkName,
        externalId,
        status: "queued",
        headSha: plan.headSha,
        headBranch: plan.headBranch,
        event: "rerun",
        url: original?.url ?? null,
        triggeredByRunId: run.id,
        createdAt: opts.now,
      },
      update: {},
      select: { id: true, headSha: true, headBranch: true, status: true },
    });
  }
  if (!pipeline) return null;
  if (pipeline.status !== "completed") {
    // GitHub answers later: the result is read from the workflow run's new attempt (rerun.settle).
    await enqueue(tx, "rerun.settle", { writeBackId: opts.wb.id, tries: 0 }, { jobKey: `rerun-settle:${opts.wb.id}`, runAt: new Date(opts.now.getTime() + settleDelayMs(0)) });
    return pipeline.id;
  }
  await emitCheckRerun(tx, { wb: opts.wb, plan, run, pipeline, now: opts.now });
  return pipeline.id;
}

/** How long rerun.settle waits before its try `n` (30 s, doubling, at most 15 minutes). */
export const settleDelayMs = (n: number) => Math.min(30_000 * 2 ** n, 15 * 60_000);
/** Tries before rerun.settle gives up on a GitHub rerun (about 12 hours at the cap). */
export const maxSettleTries = 50;

const conclusions: readonly CheckConclusion[] = ["success", "failure", "cancelled", "timed_out", "skipped", "neutral", "action_required", "startup_failure", "stale"];

/**
 * A GitHub rerun's result: the workflow run's attempt this rerun made, read from GitHub. Once it
 * is completed, its linked Pipeline is completed and the check_rerun emitted, in one transaction
 * that only the first settling makes (a retried job changes nothing twice). "waiting": not
 * finished yet; "settled": done now or before; "gone": nothing to settle.
 */
export async function settleRerun(opts: { db: Db; forgeFor: (repository: { fullName: string; forge: string }) => Forge; writeBackId: string; now?: Date }): Promise<"waiting" | "settled" | "gone"> {
  const now = opts.now ?? new Date();
  const wb = await opts.db.writeBack.findUnique({
    where: { id: opts.writeBackId },
    select: { id: true, kind: true, runId: true, approvalId: true, approvedBy: true, outcome: true, externalRef: true, target: true, run: { select: { repositoryId: true, repository: { select: { fullName: true, forge: true } } } } },
  });
  const plan = wb ? planOf(wb.target) : null;
  if (!wb || wb.kind !== "rerun_workflow" || wb.outcome !== "succeeded" || !wb.externalRef || !plan) return "gone";
  const pipeline = await opts.db.pipeline.findFirst({ where: { repositoryId: wb.run.repositoryId, externalId: wb.externalRef, triggeredByRunId: wb.runId }, select: { id: true, status: true } });
  if (!pipeline) return "gone";
  if (pipeline.status === "completed") return "settled";
  const forge = opts.forgeFor(wb.run.repository);
  const attempt = Number(wb.externalRef.split("#")[1]);
  if (!forge.workflowRun || !Number.isInteger(attempt)) return "gone";
  const state = await forge.workflowRun(wb.run.repository.fullName, plan.externalRunId, attempt);
  if (!state) return "gone";
  if (state.status !== "completed") {
    await opts.db.pipeline.updateMany({ where: { id: pipeline.id, status: "queued" }, data: { status: "in_progress", startedAt: now } });
    return "waiting";
  }
  const conclusion = conclusions.find((c) => c === state.conclusion) ?? null;
  return transaction(opts.db, "settleRerun", async (tx) => {
    const done = await tx.pipeline.updateMany({ where: { id: pipeline.id, status: { not: "completed" } }, data: { status: "completed", conclusion, completedAt: now, ...(state.url ? { url: state.url } : {}) } });
    if (done.count === 0) return "settled" as const;
    const run = await tx.agentDispatchRun.findUniqueOrThrow({
      where: { id: wb.runId },
      select: { repositoryId: true, pullRequest: { select: { number: true } }, repository: { select: { fullName: true, cloneUrl: true, defaultBranch: true, visibility: true } } },
    });
    const row = await tx.pipeline.findUniqueOrThrow({ where: { id: pipeline.id }, select: { headSha: true, headBranch: true } });
    await emitCheckRerun(tx, { wb, plan, run, pipeline: row, now });
    return "settled" as const;
  });
}

/** The check_rerun event for a finished rerun, through the same path as every CI event; its delivery id is the write-back's, so a repeat is a no-op. */
async function emitCheckRerun(
  tx: Tx,
  opts: {
    wb: { id: string; runId: string; approvalId: string | null; approvedBy: string | null };
    plan: RerunPlan;
    run: { repositoryId: string; pullRequest: { number: number } | null; repository: { fullName: string; cloneUrl: string; defaultBranch: string; visibility: CheckRerunEvent["repository"]["visibility"] } };
    pipeline: { headSha: string; headBranch: string | null };
    now: Date;
  },
) {
  // A person asked for it (and, held for approval, a person approved it): the approver acts, else the requester.
  const login = opts.wb.approvedBy ?? opts.plan.requestedBy;
  const user = await tx.user.findUnique({ where: { email: login }, select: { isAdmin: true, memberships: { where: { repositoryId: opts.run.repositoryId }, select: { role: true } } } });
  const event: CheckRerunEvent = {
    type: "check_rerun",
    origin: "airlock",
    repository: { fullName: opts.run.repository.fullName, cloneUrl: opts.run.repository.cloneUrl, htmlUrl: null, defaultBranch: opts.run.repository.defaultBranch, visibility: opts.run.repository.visibility },
    actor: { login, type: "user", association: null, airlockRole: user?.isAdmin ? "admin" : (user?.memberships[0]?.role ?? null) },
    originalRunId: opts.wb.runId,
    approvalId: opts.wb.approvalId,
    approvedArtifactDigest: opts.plan.approvedArtifactDigest,
    target: { workflowName: opts.plan.workflowName, jobName: opts.plan.jobName, step: opts.plan.step, checkName: opts.plan.checkName },
    headSha: opts.pipeline.headSha,
    headBranch: opts.pipeline.headBranch,
    pullRequestNumber: opts.run.pullRequest?.number ?? null,
  };
  await ingestCiEvent({ db: tx, event, deliveryId: `check-rerun-${opts.wb.id}`, now: opts.now });
}
