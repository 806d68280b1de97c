// Recent events as the live trigger path sees them, for the trigger dry run and the stack
// preview: stored deliveries loaded by the live path's own loader (load.ts), and failed Job rows
// no delivery covers as the failed-check event local CI would have sent.
import type { Db } from "@/server/db";
import { isFailingConclusion, type FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import type { LocalExtras } from "@/server/domain/ingest/delivery/local-payload";
import { loadFacts } from "./facts";
import { loadDelivery, type Described, type LoadedEvent, type UnusableEvent } from "./load";

const NO_EXTRAS: LocalExtras = { log: null, changedFiles: null, artifacts: [] };

/** A failed Job row as the failed-check event its CI would have sent. */
export async function loadJobEvent(db: Db, jobId: string): Promise<LoadedEvent | UnusableEvent> {
  const job = await db.job.findUniqueOrThrow({
    where: { id: jobId },
    include: { pipeline: { include: { repository: true, pullRequest: true } } },
  });
  const { pipeline } = job;
  const { repository, pullRequest: pr } = pipeline;
  const described: Described = {
    ref: { kind: "job", jobId: job.id },
    label: `failed job ${pipeline.workflowName} / ${job.name} at ${pipeline.headSha.slice(0, 7)}`,
    at: job.createdAt,
  };
  if (!isFailingConclusion(job.conclusion)) {
    return { ...described, ok: false, repositoryName: repository.fullName, outcome: "ignored", problem: `job concluded ${job.conclusion ?? "not yet"}` };
  }
  const github = repository.forge === "github";
  const event: FailedCheckEvent = {
    type: "failed_check",
    origin: github ? "github" : "local",
    via: github ? "workflow_job" : "local_ci",
    level: "job",
    repository: {
      fullName: repository.fullName,
      cloneUrl: repository.cloneUrl,
      htmlUrl: null,
      defaultBranch: repository.defaultBranch,
      visibility: repository.visibility,
    },
    actor: { login: github ? "github-actions[bot]" : "local-ci", type: "bot", association: null, airlockRole: null },
    headSha: pipeline.headSha,
    headBranch: pipeline.headBranch,
    triggerEvent: pipeline.event,
    pullRequests: pr
      ? [{ number: pr.number, url: pr.url, headRef: pr.headRef, headSha: pr.headSha, headRepoFullName: pr.headRepoFullName, baseRef: pr.baseRef, baseSha: pr.baseSha, isFork: pr.isFork }]
      : [],
    // A GitHub job without a pull request is a workflow_job: its payload cannot say (origin.ts decides).
    isFork: pr?.isFork ?? (github ? null : false),
    workflowName: pipeline.workflowName,
    jobName: job.name,
    checkName: pipeline.checkName,
    step: job.step,
    runId: pipeline.externalId,
    jobId: job.externalId,
    runAttempt: 1,
    url: pipeline.url,
    conclusion: job.conclusion,
    startedAt: pipeline.startedAt?.toISOString() ?? null,
    completedAt: pipeline.completedAt?.toISOString() ?? null,
    runnerLabels: job.runnerPool ? [job.runnerPool] : [],
    runnerName: job.runnerPool,
  };
  const extras: LocalExtras = { ...NO_EXTRAS, log: job.logExcerpt === "" ? null : job.logExcerpt };
  const { pullRequest: _pr, repository: _repo, ...pipelineRow } = pipeline;
  const facts = await loadFacts({ db, repository, event, extras });
  // The records exist already (a delivery would have written them): name them.
  facts.pipeline ??= pipelineRow;
  facts.job ??= job;
  return { ...described, ok: true, repository, event, extras, deliveryId: `job:${job.id}`, eventName: "workflow_job", facts, actorUserId: null };
}

export type RecentEventsOptions = {
  db: Db;
  /** Repositories in scope ("all" for a rule on every repository the caller sees). */
  repositoryIds: readonly string[] | "all";
  limit?: number;
  /** Only failed checks (the stack preview). */
  failuresOnly?: boolean;
};

/** Newest first: recent deliveries, then failed jobs no listed delivery covers. */
export async function recentRecordedEvents(opts: RecentEventsOptions): Promise<(LoadedEvent | UnusableEvent)[]> {
  const { db } = opts;
  const take = opts.limit ?? 40;
  const scope = opts.repositoryIds;
  const deliveries = await db.webhookDelivery.findMany({
    where: opts.failuresOnly ? { event: { in: ["failed_check", "workflow_job", "workflow_run", "check_run"] } } : {},
    orderBy: [{ receivedAt: "desc" }, { id: "desc" }],
    take: take * 2,
    select: { deliveryId: true, source: true, event: true, action: true, payload: true, receivedAt: true },
  });
  const loaded: (LoadedEvent | UnusableEvent)[] = [];
  for (const delivery of deliveries) {
    const item = await loadDelivery(db, delivery);
    const repoId = item.ok ? item.repository.id : null;
    if (scope !== "all" && (repoId === null || !scope.includes(repoId))) continue;
    if (opts.failuresOnly && (!item.ok || item.event.type !== "failed_check")) continue;
    loaded.push(item);
    if (loaded.length >= take) break;
  }
  const covered = new Set(
    loaded.flatMap((e) => (e.ok && e.event.type === "failed_check" ? [`${e.repository.id}:${e.event.runId}:${e.event.jobId ?? ""}`] : [])),
  );
  const jobs = await db.job.findMany({
    where: {
      conclusion: { in: ["failure", "timed_out", "startup_failure"] },
      ...(scope === "all" ? {} : { pipeline: { repositoryId: { in: [...scope] } } }),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
    select: { id: true, externalId: true, pipeline: { select: { repositoryId: true, externalId: true } } },
  });
  for (const job of jobs) {
    if (covered.has(`${job.pipeline.repositoryId}:${job.pipeline.externalId}:${job.externalId}`)) continue;
    loaded.push(await loadJobEvent(db, job.id));
  }
  return loaded.sort((a, b) => b.at.getTime() - a.at.getTime()).slice(0, take);
}

