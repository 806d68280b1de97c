// Turn a normalised event (plus what the caller knows) into the one shape the matcher compares
// rules against, and refuse whole events that must not dispatch (no permission, a closed PR...).
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import { decideActorPermission, type PermissionInput } from "./actor-permission";
import type { TaskKind, TriggerKind } from "@/server/domain/ci-events/enums";
import {
  checkRerunDedupeKey,
  dispatchDedupeKey,
  dispatchSubjectKey,
  failedCheckDedupeKey,
  failedCheckSubjectKey,
  flakyScanDedupeKey,
  releaseDedupeKey,
  type DispatchKeyInput,
  type FailedCheckSubjectInput,
} from "./dedupe-keys";
import { failureContextDigest } from "@/server/domain/ci-events/failure/context-digest";
import type { EventFacts, MatchOptions, RepositoryFacts } from "./match-types";
import { MAX_RELEASE_VERSION, type ReleaseFacts } from "./release-facts";
import type { TriggerRule } from "./trigger-rule";

type KeyFacts =
  | ({ kind: "failed_check" } & Omit<FailedCheckSubjectInput, "repository">)
  | { kind: "check_rerun"; originalRunId: string; approvedArtifactDigest: string | null; targetCheck: string }
  | { kind: "release"; version: string; commitSha: string | null; artifactDigests: readonly string[] }
  | { kind: "flaky_scan"; signature: string; queryDigest: string; resultSetDigest: string }
  | { kind: "dispatch"; keyKind: DispatchKeyInput["kind"]; pullRequestNumber: number | null; headSha: string | null; command: string };

export type Subject = {
  kind: TriggerKind;
  summary: string;
  /** Set when the whole event must not dispatch, whatever the rules say. */
  refusal: string | null;
  /** The task kind the request asks for (comment command, manual request), if any. */
  taskKind: TaskKind | null;
  /** A manual request for one specific rule. */
  ruleId: string | null;
  /** A manual request's own stack, over the rule's. */
  stackId: string | null;
  workflow: string | null;
  job: string | null;
  step: string | null;
  branch: string | null;
  paths: readonly string[] | null;
  failureSignature: string | null;
  /** Release: the facts its release keys are matched on (null on other kinds, or unknown). */
  release: ReleaseFacts | null;
  key: KeyFacts;
};

export type NoSubject = { kind: "none"; reason: string };

const COMMAND_TASKS = { diagnose: "diagnose", fix_failing_check: "repair", triage: "triage" } as const;

const short = (sha: string) => sha.slice(0, 12);

export function subjectOf(event: CiEvent, repository: RepositoryFacts, facts: EventFacts, options: MatchOptions): Subject | NoSubject {
  const base = { refusal: null, taskKind: null, ruleId: null, stackId: null, workflow: null, job: null, step: null, branch: null, paths: facts.changedFiles ?? null, failureSignature: facts.failureSignature ?? null, release: null };
  const permission = (via: PermissionInput["via"]) => {
    const decision = decideActorPermission({
      association: event.type === "ignored" ? null : event.actor.association,
      airlockRole: event.type === "ignored" ? null : event.actor.airlockRole,
      isBot: event.type !== "ignored" && event.actor.type === "bot",
      via,
    });
    return decision.allowed ? null : `${event.type === "ignored" ? "actor" : event.actor.login} may not dispatch: ${decision.reason}`;
  };

  switch (event.type) {
    case "failed_check": {
      const pr = facts.pullRequestNumber ?? event.pullRequests[0]?.number ?? null;
      const pipelineOnly =
        event.level === "pipeline" && event.conclusion === "failure" && !options.matchPipelineFailures;
      return {
        ...base,
        kind: "failed_check",
        summary: `failed check ${JSON.stringify(event.jobName ?? event.workflowName ?? event.checkName ?? "?")} (${event.conclusion}) at ${short(event.headSha)}`,
        refusal: pipelineOnly
          ? `workflow ${JSON.stringify(event.workflowName ?? "?")} failed as a whole: its failing jobs arrive as job-level events`
          : null,
        workflow: event.workflowName,
        job: event.jobName,
        step: event.step,
        branch: facts.headBranch ?? event.headBranch ?? event.pullRequests[0]?.headRef ?? null,
        key: {
          kind: "failed_check",
          pullRequestNumber: pr,
          checkSource: event.workflowName ?? event.checkName,
          commitSha: event.headSha,
          job: event.jobName,
          step: event.step,
          failureSignature: facts.failureSignature ?? null,
          contextDigest: facts.contextDigest ?? failureContextDigest({ logExcerpt: null, artifactDigests: [] }),
        },
      };
    }
    case "pr_comment": {
      if (event.command === "cancel") return { kind: "none", reason: "cancel stops the pull request's active runs; it dispatches nothing" };
      const refusal =
        event.pullRequest.state === "closed" ? `pull request #${event.pullRequest.number} is closed` : permission("comment");
      return {
        ...base,
        kind: "pr_comment",
        summary: `${event.handle} ${event.command} by ${event.actor.login} on #${event.pullRequest.number}`,
        refusal,
        taskKind: COMMAND_TASKS[event.command],
        branch: facts.headBranch ?? null,
        key: { kind: "dispatch", keyKind: "pr-comment", pullRequestNumber: event.pullRequest.number, headSha: facts.headSha ?? null, command: event.command },
      };
    }
    case "pr_labeled": {
      const wanted = repository.dispatchLabel.toLowerCase();
      if (event.label.toLowerCase() !== wanted) {
        return { kind: "none", reason: `label ${JSON.stringify(event.label)} is not the dispatch label ${JSON.stringify(repository.dispatchLabel)}` };
      }
      const refusal = event.pullRequest.state === "closed" ? `pull request #${event.pullRequest.number} is closed` : permission("label");
      return {
        ...base,
        kind: "label",
        summary: `label ${JSON.stringify(event.label)} by ${event.actor.login} on #${event.pullRequest.number}`,
        refusal,
        branch: facts.headBranch ?? event.pullRequest.headRef,
        key: {
          kind: "dispatch",
          keyKind: "label",
          pullRequestNumber: event.pullRequest.number,
          headSha: facts.headSha ?? event.pullRequest.headSha,
          command: `label:${event.label}`,
        },
      };
    }
    case "check_rerun":
      return {
        ...base,
        kind: "check_rerun",
        summary: `rerun of ${JSON.stringify(event.target.checkName)} requested by ${event.actor.login}`,
        // A rule or a person may ask; a bot only with an approval record behind it.
        refusal:
          event.actor.type === "bot" && event.approvalId === null ? "a rerun requested by a bot needs an approval record" : null,
        workflow: event.target.workflowName,
        job: event.target.jobName,
        step: event.target.step,
        branch: facts.headBranch ?? event.headBranch,
        paths: null,
        key: { kind: "check_rerun", originalRunId: event.originalRunId, approvedArtifactDigest: event.approvedArtifactDigest, targetCheck: event.target.checkName },
      };
    case "release":
      return {
        ...base,
        kind: "release",
        summary: `release ${event.tag.slice(0, 120)} (${event.via.replace("_", " ")})`,
        // A version no key could compare, nor a person read on the approval screen.
        refusal: event.version.length > MAX_RELEASE_VERSION ? `release version is ${event.version.length} characters long, over ${MAX_RELEASE_VERSION}: not reviewed` : null,
        release: facts.release ?? null,
        workflow: event.workflowName,
        branch: event.tag,
        paths: null,
        key: {
          kind: "release",
          version: event.version,
          commitSha: event.commitSha ?? facts.headSha ?? null,
          artifactDigests: facts.artifactDigests ?? event.assets.flatMap((a) => (a.digest ? [a.digest] : [])),
        },
      };
    case "flaky_scan":
      return {
        ...base,
        kind: "flaky_scan",
        summary: `flaky cluster ${event.signature} (${event.occurrences} failures)`,
        workflow: event.workflowName,
        job: event.jobName,
        branch: event.branch,
        paths: event.paths,
        failureSignature: event.signature,
        key: { kind: "flaky_scan", signature: event.signature, queryDigest: event.queryDigest, resultSetDigest: event.resultSetDigest },
      };
    case "manual":
      return {
        ...base,
        kind: "manual",
        summary: `manual ${event.taskKind} by ${event.actor.login}`,
        refusal: permission("manual"),
        taskKind: event.taskKind,
        ruleId: event.ruleId,
        stackId: event.stackId ?? null,
        workflow: event.workflowName,
        job: event.jobName,
        step: event.step,
        branch: facts.headBranch ?? event.headBranch,
        // One run per submission: the request id keeps two submissions on one commit apart.
        key: { kind: "dispatch", keyKind: "manual", pullRequestNumber: event.pullRequestNumber, headSha: event.headSha, command: event.requestId ? `${event.taskKind}:${event.requestId}` : event.taskKind },
      };
    case "pr_updated":
      return { kind: "none", reason: `pull request ${event.action}: updates the record, dispatches nothing` };
    case "pr_review":
      return { kind: "none", reason: "review stored as pull request discussion; dispatches nothing" };
    case "branch_push":
      return { kind: "none", reason: `push to ${event.branch}: records where the commit comes from, dispatches nothing` };
    case "ignored":
      return { kind: "none", reason: `ignored: ${event.reason}` };
  }
}

export type Keys = {
  dedupeKey: string;
  /** What the key identifies without the rule (the failure, the request): rules compete per subject. */
  subjectKey: string;
};

/** The run's dedupe key and its subject, or what is missing to compute them. */
export function dedupeKeyFor(subject: Subject, rule: TriggerRule, repository: RepositoryFacts): Keys | { missing: string } {
  const k = subject.key;
  const own = (key: string): Keys => ({ dedupeKey: key, subjectKey: key });
  switch (k.kind) {
    case "failed_check": {
      const { kind: _kind, ...parts } = k;
      const input = { repository: repository.fullName, ...parts };
      return { dedupeKey: failedCheckDedupeKey({ ...input, ruleId: rule.id }), subjectKey: failedCheckSubjectKey(input) };
    }
    case "check_rerun":
      return own(checkRerunDedupeKey(k));
    case "release":
      if (k.commitSha === null) return { missing: "the release's commit is unknown: resolve the tag to a commit first" };
      return own(releaseDedupeKey({ repository: repository.fullName, version: k.version, commitSha: k.commitSha, artifactDigests: k.artifactDigests }));
    case "flaky_scan":
      return own(flakyScanDedupeKey(k));
    case "dispatch": {
      if (k.headSha === null) return { missing: "the pull request's head SHA is unknown: resolve the pull request first" };
      const input = { kind: k.keyKind, repository: repository.fullName, pullRequestNumber: k.pullRequestNumber, headSha: k.headSha, command: k.command };
      return { dedupeKey: dispatchDedupeKey({ ...input, ruleId: rule.id }), subjectKey: dispatchSubjectKey(input) };
    }
  }
}
