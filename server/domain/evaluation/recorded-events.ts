// Recent events as the live trigger path sees them, for the trigger dry run and the stack
// preview: stored deliveries resolved the way evaluation resolves them (GitHub payloads through
// fromGithub with the repository's bot handle, local deliveries as recorded), failed Job rows no
// delivery covers as the failed-check event local CI would send, then Airlock's facts (loadFacts)
// and the matcher (matchTriggers) with the facts mapped exactly as evaluateDelivery maps them.
import type { Db, Repository } from "@/server/db";
import { isFailingConclusion, type FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import type { DispatchableEvent } from "@/server/domain/evaluation/context-input";
import { loadFacts, resolveAirlockActor, type Facts } from "@/server/domain/evaluation/facts";
import { repositoryNameOf, resolveDelivery } from "@/server/domain/ingest/stored-delivery";
import type { LocalExtras } from "@/server/domain/ingest/delivery/local-payload";
import { isAppError } from "@/server/errors";
import { matchTriggers, type MatchResult } from "@/server/domain/triggers/matcher";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";

export type RecordedEventRef = { kind: "delivery"; deliveryId: string } | { kind: "job"; jobId: string };

type Described = { ref: RecordedEventRef; label: string; at: Date };

export type LoadedEvent = Described & {
  ok: true;
  repository: Repository;
  event: DispatchableEvent;
  extras: LocalExtras;
  /** The delivery id a run records (a job row has none: "job:<id>"). */
  deliveryId: string;
  eventName: string;
  facts: Facts;
};

export type UnusableEvent = Described & { ok: false; repositoryName: string | null; problem: string };

const NO_EXTRAS: LocalExtras = { log: null, changedFiles: null, artifacts: [] };

async function findRepository(db: Db, fullName: string): Promise<Repository | null> {
  return (
    (await db.repository.findUnique({ where: { fullName } })) ??
    (await db.repository.findFirst({ where: { fullName: { equals: fullName, mode: "insensitive" } } }))
  );
}

type DeliveryRow = { deliveryId: string; source: "local" | "github"; event: string; action: string | null; payload: unknown; receivedAt: Date };

export async function loadDeliveryEvent(db: Db, delivery: DeliveryRow): Promise<LoadedEvent | UnusableEvent> {
  const described: Described = {
    ref: { kind: "delivery", deliveryId: delivery.deliveryId },
    label: `${delivery.source} ${delivery.event}${delivery.action ? `.${delivery.action}` : ""} ${delivery.deliveryId}`,
    at: delivery.receivedAt,
  };
  const name = repositoryNameOf(delivery);
  const repository = name ? await findRepository(db, name) : null;
  if (!repository) return { ...described, ok: false, repositoryName: name, problem: `repository ${name ?? "(none)"} is not registered in Airlock` };
  try {
    const resolved = resolveDelivery(delivery, repository.botHandle);
    let event = resolved.event;
    if (event.type === "ignored") return { ...described, ok: false, repositoryName: repository.fullName, problem: `ignored: ${event.reason}` };
    const actor = await resolveAirlockActor(db, repository.id, resolved.githubUserId);
    if (actor?.role) event = { ...event, actor: { ...event.actor, airlockRole: actor.role } };
    const facts = await loadFacts({ db, repository, event, extras: resolved.extras });
    return { ...described, ok: true, repository, event, extras: resolved.extras, deliveryId: delivery.deliveryId, eventName: delivery.event, facts };
  } catch (err) {
    if (!isAppError(err) || err.status >= 500) throw err;
    return { ...described, ok: false, repositoryName: repository.fullName, problem: err.message };
  }
}

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
    return { ...described, ok: false, repositoryName: repository.fullName, problem: `job concluded ${job.conclusion ?? "not yet"}` };
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
    isFork: pr?.isFork ?? false,
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
  return { ...described, ok: true, repository, event, extras, deliveryId: `job:${job.id}`, eventName: "workflow_job", facts };
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
    const item = await loadDeliveryEvent(db, delivery);
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

/** The enabled rules the live path evaluates for a repository, in its order. */
export function liveRulesFor(db: Db, repositoryId: string) {
  return db.triggerRule.findMany({
    where: { enabled: true, OR: [{ repositoryId: null }, { repositoryId }] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** matchTriggers on a loaded event, with the facts mapped as the live evaluation maps them. */
export function matchLoadedEvent(loaded: LoadedEvent, rules: readonly TriggerRule[]): MatchResult {
  const { facts, repository } = loaded;
  return matchTriggers({
    event: loaded.event,
    rules,
    repository: {
      id: repository.id,
      fullName: repository.fullName,
      autoRunOnFailedCheck: repository.autoRunOnFailedCheck,
      dispatchLabel: repository.dispatchLabel,
    },
    facts: {
      changedFiles: facts.changedFiles,
      failureSignature: facts.failure?.signature ?? null,
      pullRequestNumber: facts.pullRequestNumber,
      headSha: facts.headSha,
      headBranch: facts.headBranch,
      ...(loaded.extras.artifacts.length > 0 ? { artifactDigests: facts.artifacts.flatMap((a) => (a.digest ? [a.digest] : [])) } : {}),
    },
  });
}
