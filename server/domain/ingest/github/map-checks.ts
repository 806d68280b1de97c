// check_run, workflow_run and workflow_job "completed" -> failed_check.
import type { FailedCheckEvent, FailingConclusion } from "@/server/domain/ci-events/ci-event";
import { actorFromUser, pullRequestRefFromLink, repositoryRef } from "./common";
import type { GhCheckRunCompleted, GhWorkflowJobCompleted, GhWorkflowRunCompleted } from "./payload-schemas";

export function mapCheckRun(p: GhCheckRunCompleted, conclusion: FailingConclusion): FailedCheckEvent {
  const run = p.check_run;
  const pullRequests = run.pull_requests.map((link) => pullRequestRefFromLink(link, p.repository));
  // GitHub documents that a check suite whose head branch lives in a fork has head_branch null
  // and no pull requests; with linked pull requests the repo ids decide.
  const isFork =
    pullRequests.length > 0 ? pullRequests.some((pr) => pr.isFork === true) : run.check_suite.head_branch === null;
  return {
    type: "failed_check",
    origin: "github",
    via: "check_run",
    level: "job",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.sender),
    headSha: run.head_sha,
    headBranch: run.check_suite.head_branch,
    triggerEvent: null,
    pullRequests,
    isFork,
    // An external check has no workflow: the app that runs it plays that part.
    workflowName: run.app.name,
    jobName: run.name,
    checkName: run.name,
    step: null,
    runId: String(run.check_suite.id),
    jobId: String(run.id),
    runAttempt: null,
    url: run.html_url,
    conclusion,
    startedAt: run.started_at,
    completedAt: run.completed_at,
    runnerLabels: [],
    runnerName: null,
  };
}

export function mapWorkflowRun(p: GhWorkflowRunCompleted, conclusion: FailingConclusion): FailedCheckEvent {
  const run = p.workflow_run;
  const headRepo = run.head_repository;
  return {
    type: "failed_check",
    origin: "github",
    via: "workflow_run",
    level: "pipeline",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(run.triggering_actor ?? p.sender),
    headSha: run.head_sha,
    headBranch: run.head_branch,
    triggerEvent: run.event,
    pullRequests: run.pull_requests.map((link) => pullRequestRefFromLink(link, p.repository)),
    // A deleted head repository can only have been a fork.
    isFork: headRepo === null ? true : headRepo.id !== run.repository.id,
    workflowName: run.name,
    jobName: null,
    checkName: null,
    step: null,
    runId: String(run.id),
    jobId: null,
    runAttempt: run.run_attempt ?? null,
    url: run.html_url,
    conclusion,
    startedAt: run.run_started_at ?? null,
    completedAt: run.updated_at,
    runnerLabels: [],
    runnerName: null,
  };
}

export function mapWorkflowJob(p: GhWorkflowJobCompleted, conclusion: FailingConclusion): FailedCheckEvent {
  const job = p.workflow_job;
  const failedStep = [...job.steps]
    .sort((a, b) => a.number - b.number)
    .find((s) => s.conclusion === "failure" || s.conclusion === "timed_out");
  return {
    type: "failed_check",
    origin: "github",
    via: "workflow_job",
    level: "job",
    repository: repositoryRef(p.repository),
    actor: actorFromUser(p.sender),
    headSha: job.head_sha,
    headBranch: job.head_branch ?? null,
    triggerEvent: null,
    // workflow_job payloads name no pull request and no head repository: the caller links the
    // job to its workflow run (same run_id), which carries both.
    pullRequests: [],
    isFork: null,
    workflowName: job.workflow_name ?? null,
    jobName: job.name,
    // GitHub Actions names a job's check run after the job.
    checkName: job.name,
    step: failedStep?.name ?? null,
    runId: String(job.run_id),
    jobId: String(job.id),
    runAttempt: job.run_attempt ?? null,
    url: job.html_url,
    conclusion,
    startedAt: job.started_at,
    completedAt: job.completed_at,
    runnerLabels: job.labels,
    runnerName: job.runner_name,
  };
}
