// The CI records a delivery updates: the PullRequest (opened, synchronize, labeled, review), the
// Pipeline and Job of a failed check, and the commit a branch push brought (PushedCommit).
// Inside the evaluation's transaction, under advisory locks, and never clobbering what another
// writer (the local CI) already filled in.
import type { Prisma, Repository, Tx } from "@/server/db";
import { advisoryLock } from "@/server/db/advisory-lock";
import type { CiEvent, FailedCheckEvent, PrReviewEvent, PullRequestSnapshot } from "@/server/domain/ci-events/ci-event";
import { logExcerptOf, type Facts } from "./facts";
import { pipelineLockKey, prLockKey } from "./locks";

export type RecordIds = { pullRequestId: string | null; pipelineId: string | null; jobId: string | null };

export async function writeRecords(opts: { tx: Tx; repository: Repository; event: CiEvent; facts: Facts; now: Date; deliveryId: string }): Promise<RecordIds> {
  const { tx, repository, event, facts } = opts;
  const ids: RecordIds = { pullRequestId: facts.pullRequest?.id ?? null, pipelineId: facts.pipeline?.id ?? null, jobId: facts.job?.id ?? null };
  switch (event.type) {
    case "pr_updated":
    case "pr_labeled":
      ids.pullRequestId = await upsertPullRequest(tx, repository.id, event.pullRequest, {
        // A push makes the old list stale; unknown beats wrong for path-filtered rules.
        changedFiles: facts.changedFiles ?? (event.type === "pr_updated" && event.action === "synchronize" ? [] : undefined),
      });
      break;
    case "pr_review":
      ids.pullRequestId = await recordReview(tx, repository.id, event);
      break;
    case "branch_push":
      // The first push of a commit names its branch; a later push of the same commit changes nothing.
      await tx.pushedCommit.createMany({
        data: [{ repositoryId: repository.id, sha: event.headSha, branch: event.branch, pusher: event.actor.login, deliveryId: opts.deliveryId }],
        skipDuplicates: true,
      });
      break;
    case "failed_check": {
      const written = await upsertPipelineAndJob(tx, repository.id, event, facts);
      ids.pipelineId = written.pipelineId;
      ids.jobId = written.jobId;
      break;
    }
    default:
      break;
  }
  return ids;
}

async function upsertPullRequest(tx: Tx, repositoryId: string, pr: PullRequestSnapshot, extra: { changedFiles?: string[] }): Promise<string> {
  await advisoryLock(tx, prLockKey(repositoryId, pr.number));
  const data = {
    title: pr.title,
    body: pr.body,
    author: pr.author,
    headRef: pr.headRef,
    headSha: pr.headSha,
    baseRef: pr.baseRef,
    baseSha: pr.baseSha,
    // Unknown fork status is stored as a fork: untrusted until proven otherwise.
    isFork: pr.isFork ?? true,
    headRepoFullName: pr.headRepoFullName,
    labels: [...new Set(pr.labels)],
    state: pr.merged ? "merged" : pr.state,
    mergeable: pr.mergeable,
    url: pr.url,
    ...(extra.changedFiles === undefined ? {} : { changedFiles: extra.changedFiles }),
  } satisfies Prisma.PullRequestUpdateInput;
  const row = await tx.pullRequest.upsert({
    where: { repositoryId_number: { repositoryId, number: pr.number } },
    create: { repositoryId, number: pr.number, ...data },
    update: data,
    select: { id: true },
  });
  return row.id;
}

/** A submitted review: the PR's review state (the fix-forward loop reads it) and the delivery. */
async function recordReview(tx: Tx, repositoryId: string, event: PrReviewEvent): Promise<string> {
  const pr = event.pullRequest;
  await advisoryLock(tx, prLockKey(repositoryId, pr.number));
  const reviewState = event.review.state;
  const row = await tx.pullRequest.upsert({
    where: { repositoryId_number: { repositoryId, number: pr.number } },
    create: {
      repositoryId,
      number: pr.number,
      title: pr.title,
      author: pr.author,
      headRef: pr.headRef,
      headSha: pr.headSha,
      baseRef: pr.baseRef,
      baseSha: pr.baseSha,
      isFork: pr.isFork ?? true,
      headRepoFullName: pr.headRepoFullName,
      url: pr.url,
      reviewState,
    },
    update: { reviewState },
    select: { id: true },
  });
  return row.id;
}

async function upsertPipelineAndJob(tx: Tx, repositoryId: string, event: FailedCheckEvent, facts: Facts) {
  await advisoryLock(tx, pipelineLockKey(repositoryId, event.runId));
  const where = { repositoryId_externalId: { repositoryId, externalId: event.runId } };
  const existing = await tx.pipeline.findUnique({ where });
  const pipelineLevel = event.level === "pipeline";
  const pipeline = existing
    ? await tx.pipeline.update({
        where,
        data: {
          // A failed job fails its pipeline; a completed workflow run settles it.
          conclusion: existing.conclusion ?? event.conclusion,
          ...(pipelineLevel ? { status: "completed", conclusion: event.conclusion, completedAt: dateOrNull(event.completedAt) } : {}),
          pullRequestId: existing.pullRequestId ?? facts.pullRequest?.id ?? null,
          url: existing.url ?? (pipelineLevel ? event.url : null),
        },
        select: { id: true },
      })
    : await tx.pipeline.create({
        data: {
          repositoryId,
          pullRequestId: facts.pullRequest?.id ?? null,
          workflowName: event.workflowName ?? event.checkName ?? "checks",
          checkName: event.checkName ?? event.workflowName ?? event.jobName ?? "check",
          externalId: event.runId,
          status: pipelineLevel ? "completed" : "in_progress",
          conclusion: event.conclusion,
          headSha: event.headSha,
          headBranch: event.headBranch,
          event: event.triggerEvent,
          url: pipelineLevel ? event.url : null,
          startedAt: dateOrNull(event.startedAt),
          completedAt: pipelineLevel ? dateOrNull(event.completedAt) : null,
        },
        select: { id: true },
      });
  if (event.jobId === null) return { pipelineId: pipeline.id, jobId: null };

  const excerpt = facts.log === null ? null : logExcerptOf(facts.log);
  const failure = facts.failure;
  const jobWhere = { pipelineId_externalId: { pipelineId: pipeline.id, externalId: event.jobId } };
  // A pipeline created just now has no jobs yet.
  const job = existing ? await tx.job.findUnique({ where: jobWhere }) : null;
  const written = job
    ? await tx.job.update({
        where: jobWhere,
        data: {
          status: "completed",
          conclusion: event.conclusion,
          step: job.step ?? event.step,
          failureSignature: job.failureSignature ?? failure?.signature ?? null,
          failingTests: job.failingTests.length > 0 ? job.failingTests : (failure?.testNames ?? []),
          ...(job.logExcerpt === "" && excerpt ? { logExcerpt: excerpt.text, logExcerptStartLine: excerpt.startLine } : {}),
        },
        select: { id: true },
      })
    : await tx.job.create({
        data: {
          pipelineId: pipeline.id,
          externalId: event.jobId,
          name: event.jobName ?? event.checkName ?? "job",
          step: event.step,
          status: "completed",
          conclusion: event.conclusion,
          runnerPool: event.runnerLabels.length > 0 ? event.runnerLabels.join(",") : event.runnerName,
          durationMs: durationMs(event.startedAt, event.completedAt),
          logExcerpt: excerpt?.text ?? "",
          logExcerptStartLine: excerpt?.startLine ?? 1,
          failureSignature: failure?.signature ?? null,
          failingTests: failure?.testNames ?? [],
        },
        select: { id: true },
      });
  return { pipelineId: pipeline.id, jobId: written.id };
}

function dateOrNull(iso: string | null): Date | null {
  if (iso === null) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

function durationMs(start: string | null, end: string | null): number | null {
  const a = dateOrNull(start);
  const b = dateOrNull(end);
  if (!a || !b) return null;
  const ms = b.getTime() - a.getTime();
  return ms >= 0 && ms < 2 ** 31 ? ms : null;
}
