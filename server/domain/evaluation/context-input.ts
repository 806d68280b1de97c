// A candidate run's context bundle input, from the event and Airlock's records: repository, ref
// with fork status, source, actor with its permission decision, pull request, pipeline, job, the
// failed log, artifacts, failure, stack snapshot summary, policy and context labels. Identity
// stays empty until admission picks the pool and service accounts.
import type { Repository } from "@/server/db";
import type { ContextBundleInput } from "@/server/domain/context/build-context-bundle";
import type { BundleActor, BundleAttribution, BundleSource, ContextLabel } from "@/server/domain/context/context-bundle";
import { INSTRUCTIONS_LABEL, UNTRUSTED_INPUT_LABEL } from "@/server/domain/context/labels";
import { bundlePolicy, bundleStack, type SnapshotStack } from "@/server/domain/stacks/bundle-parts";
import type { Candidate } from "@/server/domain/triggers/matcher";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { PermissionDecision } from "@/server/domain/triggers/actor-permission";
import type { Facts } from "./facts";
import { isForkOf } from "./origin";


export type ContextInputArgs = {
  event: DispatchableEvent;
  candidate: Candidate;
  repository: Repository;
  facts: Facts;
  permission: PermissionDecision;
  stack: SnapshotStack;
  deliveryId: string;
  eventName: string;
  /** The red checks on this branch attributed before assembly (fix-forward loop); none when absent. */
  attribution?: BundleAttribution[];
};

export function contextInputFor(args: ContextInputArgs): ContextBundleInput {
  const { event, candidate, repository, facts, stack } = args;
  const pr = pullRequestView(event, facts);
  const untrusted = facts.origin.kind !== "repository" || repository.trustTier === "untrusted";
  const commitSha = facts.headSha ?? "unknown";
  const pipeline = facts.pipeline;
  const job = facts.job;
  const failedCheck = event.type === "failed_check" ? event : null;
  const labels: ContextLabel[] = [
    ...(untrusted ? [UNTRUSTED_INPUT_LABEL] : []),
    {
      name: `trigger:${candidate.ruleName}`,
      fragment: candidate.reason,
      provenance: { source: "trigger_rule", ref: candidate.ruleId },
    },
    // A manual dispatch's instructions, as the person wrote them (renderPrompt adds them to a
    // template that does not place the labels itself).
    ...(event.type === "manual" && event.instructions
      ? [{ name: INSTRUCTIONS_LABEL, fragment: event.instructions, provenance: { source: "user" as const, ref: event.actor.login } }]
      : []),
  ];
  const jobName = failedCheck?.jobName ?? job?.name ?? null;
  const step = failedCheck?.step ?? job?.step ?? null;
  const logName = [jobName ?? failedCheck?.checkName ?? "log", step].filter(Boolean).join(" / ");
  const logText = facts.log ?? (job && job.logExcerpt !== "" ? job.logExcerpt : null);

  return {
    task: { kind: candidate.taskKind },
    repository: {
      fullName: repository.fullName,
      defaultBranch: repository.defaultBranch,
      cloneUrl: repository.cloneUrl,
      visibility: repository.visibility,
      trustTier: repository.trustTier,
    },
    ref: {
      branch: facts.headBranch,
      commitSha,
      headRef: pr?.headRef ?? facts.headBranch,
      headSha: facts.headSha,
      baseRef: pr?.baseRef ?? null,
      baseSha: pr?.baseSha ?? null,
      isFork: isForkOf(facts.origin),
      headRepoFullName: pr?.headRepoFullName ?? null,
      tag: event.type === "release" ? event.tag : null,
    },
    source: {
      kind: candidate.source,
      via: viaOf(event),
      triggerRuleId: candidate.ruleId,
      triggerRuleName: candidate.ruleName,
      deliveryId: args.deliveryId,
      eventName: args.eventName,
      command: event.type === "pr_comment" ? `${event.command} ${event.args}`.trim() : null,
      label: event.type === "pr_labeled" ? event.label : null,
      url: sourceUrl(event) ?? pr?.url ?? pipeline?.url ?? null,
    },
    actor: actorOf(event, args.permission),
    pullRequest: pr
      ? {
          number: pr.number,
          title: pr.title,
          body: pr.body,
          url: pr.url,
          author: pr.author,
          draft: pr.draft,
          labels: pr.labels,
          changedFiles: facts.changedFiles ?? [],
          reviewState: pr.reviewState,
          mergeable: pr.mergeable,
          discussion:
            event.type === "pr_comment"
              ? [{ kind: "comment", author: event.actor.login, body: event.body, url: event.commentUrl, at: null }]
              : [],
        }
      : null,
    pipeline: failedCheck
      ? {
          workflowName: failedCheck.workflowName ?? pipeline?.workflowName ?? failedCheck.checkName ?? "checks",
          runId: failedCheck.runId,
          status: pipeline?.status ?? (failedCheck.level === "pipeline" ? "completed" : "in_progress"),
          conclusion: failedCheck.conclusion,
          checkName: failedCheck.checkName ?? pipeline?.checkName ?? failedCheck.workflowName ?? "check",
          url: failedCheck.url,
          event: failedCheck.triggerEvent ?? pipeline?.event ?? null,
        }
      : pipeline
        ? {
            workflowName: pipeline.workflowName,
            runId: pipeline.externalId,
            status: pipeline.status,
            conclusion: pipeline.conclusion,
            checkName: pipeline.checkName,
            url: pipeline.url,
            event: pipeline.event,
          }
        : null,
    job:
      (failedCheck?.jobId ?? job)
        ? {
            id: failedCheck?.jobId ?? job?.externalId ?? "",
            name: jobName ?? "job",
            step,
            exitCode: job?.exitCode ?? null,
            runnerPool: job?.runnerPool ?? (failedCheck && failedCheck.runnerLabels.length > 0 ? failedCheck.runnerLabels.join(",") : null),
            image: job?.image ?? null,
            durationMs: job?.durationMs ?? null,
          }
        : null,
    logs: logText === null ? [] : [{ name: logName, text: logText }],
    artifacts: facts.artifacts.map((a) => ({
      name: a.name,
      type: a.type,
      url: a.url ?? null,
      digest: a.digest ?? null,
      sizeBytes: a.sizeBytes ?? null,
      retainUntil: a.retainUntil ?? null,
    })),
    failure: facts.failure
      ? {
          signature: facts.failure.signature,
          testNames: facts.failure.testNames,
          // Empty: read the error lines from the log instead.
          ...(facts.failure.errorLines.length > 0 ? { errorLines: facts.failure.errorLines } : {}),
          similarRuns: facts.similarRuns,
        }
      : undefined,
    stack: bundleStack(stack),
    policy: bundlePolicy({ repository, spec: stack.spec, untrusted }),
    contextLabels: labels,
    attribution: args.attribution,
  };
}

type PullRequestView = {
  number: number;
  title: string;
  body: string;
  url: string | null;
  author: string;
  draft: boolean;
  labels: string[];
  reviewState: string | null;
  mergeable: boolean | null;
  headRef: string;
  baseRef: string;
  baseSha: string | null;
  headRepoFullName: string | null;
};

/** The record, or for a label event the payload's fresher snapshot (the record may not exist yet). */
function pullRequestView(event: DispatchableEvent, facts: Facts): PullRequestView | null {
  const row = facts.pullRequest;
  if (event.type === "pr_labeled") {
    const s = event.pullRequest;
    return { ...s, reviewState: row?.reviewState ?? null };
  }
  if (!row) return null;
  return { ...row, draft: false };
}

function viaOf(event: DispatchableEvent): BundleSource["via"] {
  if (event.origin === "github") return "github_webhook";
  if (event.origin === "local") return "local_ci";
  switch (event.type) {
    case "flaky_scan":
      return "schedule";
    case "check_rerun":
      return "agent";
    case "manual":
      return "ui";
    default:
      return "api";
  }
}

function sourceUrl(event: DispatchableEvent): string | null {
  switch (event.type) {
    case "failed_check":
    case "release":
      return event.url;
    case "pr_comment":
      return event.commentUrl ?? event.pullRequest.url;
    case "pr_labeled":
      return event.pullRequest.url;
    default:
      return null;
  }
}

function actorOf(event: DispatchableEvent, permission: PermissionDecision): BundleActor {
  const a = event.actor;
  return {
    login: a.login,
    kind: a.type === "bot" ? "bot" : a.type === "organization" ? "team" : "user",
    association: a.association,
    airlockRole: a.airlockRole,
    permission,
  };
}
