// Triage in the loop: when a failed check arrives (local CI or a GitHub webhook), the CI-triage
// policy decides its disposition through decide(), and exactly one action follows:
//   rerun_once        -> the check is rerun through its forge (local CI job / GitHub rerun),
//                        at most once per head SHA and check; no agent is dispatched
//   fix_forward       -> the failed-check trigger rules dispatch as configured (their stack)
//   escalate_to_owner -> a notification to the repository's owners
//   roll_back         -> a notification, and a roll_back approval item on the failure's run
//                        (triage.rollBack: a revert or a rerun of the last good deploy)
// Runs inside the delivery's evaluation transaction: the decision, the action and the jobs it
// implies commit together, and a redelivery of the same failure finds the row by its key.
import type { Prisma, Repository, Tx } from "@/server/db";
import type { TriageActionKind, TriageActionStatus, TriageDisposition } from "@/server/db/generated/enums";
import type { FailedCheckEvent } from "@/server/domain/ci-events/ci-event";
import { advisoryLock } from "@/server/db/advisory-lock";
import { decide } from "@/server/domain/policy/decide";
import { PolicyFactError } from "@/server/domain/policy/fact-check";
import { enqueue } from "@/server/queue/enqueue";
import { deriveTriageFacts } from "./facts";
import { loadTriageHistory, loadTriageSubject } from "./history";
import { notifyOwner } from "./notify-owner";

export type TriageRow = Prisma.TriageDecisionGetPayload<object>;

export type TriageOutcome = {
  triage: TriageRow;
  /** false when this delivery found the decision an earlier one made. */
  created: boolean;
  /** rerun_once: the check is rerun instead of dispatching an agent. */
  holdsAgents: boolean;
};

const DISPOSITIONS = ["rerun_once", "fix_forward", "escalate_to_owner", "roll_back"] as const;

/**
 * One triage per failed attempt: a workflow run's attempt (its workflow_run and workflow_job
 * deliveries share it), a local CI pipeline, or one external check run (a re-requested check
 * run is a new check run in the same suite, so it gets its own decision).
 */
export function triageKey(event: Pick<FailedCheckEvent, "via" | "runAttempt" | "jobId">, pipelineId: string): string {
  return event.via === "check_run" && event.jobId ? `triage:${pipelineId}:check-run:${event.jobId}` : `triage:${pipelineId}#${event.runAttempt ?? 1}`;
}

export function rerunKey(repositoryId: string, headSha: string, checkName: string): string {
  return `rerun:${repositoryId}:${headSha}:${checkName}`;
}

/**
 * Decides and acts on one failed check, once. `records` are the Pipeline/Job the delivery
 * wrote; without a pipeline there is nothing to triage (null).
 */
export async function triageFailedCheck(opts: {
  tx: Tx;
  repository: Repository;
  event: FailedCheckEvent;
  records: { pipelineId: string | null; jobId: string | null; pullRequestId: string | null };
  now: Date;
  /** Why the failed job's log could not be read (evaluation/job-log.ts): said on the decision, not left silent. */
  logMissing?: string | null;
}): Promise<TriageOutcome | null> {
  const { tx, repository, event, records } = opts;
  if (!records.pipelineId) return null;
  const key = triageKey(event, records.pipelineId);
  // The pipeline's lock is already held by writeRecords; this one orders triage of one attempt.
  await advisoryLock(tx, key);
  const existing = await tx.triageDecision.findUnique({ where: { key } });
  if (existing) return { triage: existing, created: false, holdsAgents: existing.action === "rerun_check" };

  const subject = await loadTriageSubject(tx, records.pipelineId, records.jobId);
  if (!subject) return null;
  const history = await loadTriageHistory(tx, subject, event);
  const derived = deriveTriageFacts(history);

  let disposition: TriageDisposition;
  let policyDecisionId: string | null = null;
  let refusal: string | null = null;
  let ruleName: string | null = null;
  try {
    const stored = await decide({ db: tx, kind: "ci_triage", facts: derived.facts, subject: `pipeline:${subject.pipeline.id}#${event.runAttempt ?? 1}` });
    const value = stored.decision.value;
    disposition = (DISPOSITIONS as readonly unknown[]).includes(value) ? (value as TriageDisposition) : "escalate_to_owner";
    policyDecisionId = stored.id;
    ruleName = stored.decision.rule;
  } catch (err) {
    // Facts the model refuses (e.g. no stage could be named) are no decision: fail closed.
    if (!(err instanceof PolicyFactError)) throw err;
    disposition = "escalate_to_owner";
    refusal = err.message;
  }

  // External checks of one suite share a pipeline: each check run is its own check.
  const checkName = event.via === "check_run" && subject.job ? subject.job.name : subject.pipeline.checkName;
  const rerun = rerunKey(repository.id, subject.pipeline.headSha, checkName);
  let action: TriageActionKind;
  let status: TriageActionStatus;
  let detail: string;
  let bounded = false;
  if (disposition === "rerun_once" && (await tx.triageDecision.findUnique({ where: { rerunKey: rerun }, select: { id: true } }))) {
    // The policy counts reruns from stored attempts; this key is the hard bound per head SHA.
    bounded = true;
  }
  switch (disposition) {
    case "rerun_once":
      if (bounded) {
        action = "notify_owner";
        status = "pending";
        detail = `${checkName} was already rerun once at ${subject.pipeline.headSha.slice(0, 12)}: escalated instead`;
      } else {
        action = "rerun_check";
        status = repository.forge === "local" ? "requested" : "pending";
        detail = `rerun of ${checkName} at ${subject.pipeline.headSha.slice(0, 12)} ${repository.forge === "local" ? "queued on the local CI" : "requested from GitHub"}`;
      }
      break;
    case "fix_forward":
      action = "dispatch_runs";
      status = "done";
      detail = "the failed-check trigger rules dispatch with their stacks";
      break;
    case "roll_back":
      action = "roll_back_request";
      status = "awaiting_approval";
      detail = `roll back ${subject.pipeline.headSha.slice(0, 12)} (${checkName}): waiting for a maintainer`;
      break;
    default:
      action = "notify_owner";
      status = "pending";
      detail = refusal ? `escalated, fail-closed: ${refusal}` : "escalated to the repository's owners";
  }

  const triage = await tx.triageDecision.create({
    data: {
      key,
      repositoryId: repository.id,
      pipelineId: subject.pipeline.id,
      jobId: subject.job?.id ?? null,
      headSha: subject.pipeline.headSha,
      policyDecisionId,
      disposition,
      refusal,
      action,
      actionStatus: status,
      actionDetail: `${detail}${ruleName ? ` (rule ${ruleName})` : ""}${opts.logMissing ? `; decided without the log: ${opts.logMissing}` : ""}`.slice(0, 2000),
      rerunKey: action === "rerun_check" ? rerun : null,
      rerunVia: action === "rerun_check" && repository.forge !== "local" ? event.via : null,
      rerunExternalId: action === "rerun_check" && repository.forge !== "local" ? (event.via === "check_run" ? event.jobId : event.runId) : null,
    },
  });

  if (action === "rerun_check") {
    if (repository.forge === "local") {
      await enqueue(tx, "ci.run", { repositoryId: repository.id, sha: subject.pipeline.headSha, ...(event.headBranch ? { branch: event.headBranch } : {}) });
    } else {
      await enqueue(tx, "triage.rerun", { triageId: triage.id }, { jobKey: `triage.rerun:${triage.id}` });
    }
  } else if (action === "notify_owner" || action === "roll_back_request") {
    const notification = await notifyOwner(tx, {
      triage,
      repository,
      checkName,
      pullRequestId: records.pullRequestId,
      ruleName,
    });
    const updated = await tx.triageDecision.update({
      where: { id: triage.id },
      data: { notificationId: notification.id, ...(action === "notify_owner" ? { actionStatus: "done" } : {}) },
    });
    return { triage: updated, created: true, holdsAgents: false };
  }
  return { triage, created: true, holdsAgents: action === "rerun_check" };
}

/** Links the triage decision to the first run the delivery created, so the run view shows it. */
export async function linkTriageToRun(tx: Tx, outcome: TriageOutcome | null, runIds: readonly string[]): Promise<void> {
  const runId = runIds[0];
  if (!outcome || !runId || outcome.triage.runId) return;
  await tx.triageDecision.update({ where: { id: outcome.triage.id }, data: { runId } });
  // A roll-back becomes an approval item on this run (writebacks/roll-back.ts), once.
  if (outcome.triage.action === "roll_back_request") await enqueue(tx, "triage.rollBack", { triageId: outcome.triage.id }, { jobKey: `triage.rollBack:${outcome.triage.id}` });
  if (outcome.triage.policyDecisionId) {
    await tx.policyDecision.updateMany({ where: { id: outcome.triage.policyDecisionId, runId: null }, data: { runId } });
  }
}

/** One phrase for the delivery's detail line. */
export function describeTriage(outcome: TriageOutcome | null): string | null {
  if (!outcome) return null;
  const t = outcome.triage;
  return `triage ${t.disposition}${outcome.created ? "" : " (decided earlier)"}: ${t.actionDetail}`;
}
