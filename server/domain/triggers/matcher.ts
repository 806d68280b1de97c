// The pure trigger matcher: a normalised CI event + facts + trigger rules -> candidate runs
// (rule, task kind, stack, action, reason, dedupe key), and for every rule of the event's kind
// that did not match, why. The caller creates runs (dropping duplicate keys) and stores both.
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import type { RunSource, TaskKind, TriggerAction, TriggerKind } from "@/server/domain/ci-events/enums";
import { dedupeKeyFor, subjectOf, type Subject } from "./match-subject";
import { matchBranch, matchExact, matchJob, matchPaths, matchRepository, matchSignature, type Miss } from "./match-keys";
import type { EventFacts, MatchOptions, RepositoryFacts } from "./match-types";
import { releaseGaps, releaseVerdicts, type KeyVerdict, type ReleaseGap } from "./release-keys";
import { APPLICABLE_KEYS, setKeys, type MatchKey, type TriggerRule } from "./trigger-rule";

export type { EventFacts, MatchOptions, RepositoryFacts } from "./match-types";

export type MatchInput = {
  event: CiEvent;
  rules: readonly TriggerRule[];
  repository: RepositoryFacts;
  facts?: EventFacts;
  options?: MatchOptions;
};

export type Candidate = {
  ruleId: string;
  ruleName: string;
  triggerKind: TriggerKind;
  source: RunSource;
  taskKind: TaskKind;
  stackId: string;
  action: TriggerAction;
  /** One sentence for people: what matched, and why this action. */
  reason: string;
  matchedOn: MatchKey[];
  /** Release rules: every release key's verdict (the trigger proof shows which matched). */
  keyVerdicts: KeyVerdict[];
  /** Release rules: the readiness gaps found, each its own approval item on the run. */
  gaps: ReleaseGap[];
  /** Release rules: the tag and version the gaps are about (null on other kinds). */
  releaseRef: { tag: string; version: string } | null;
  dedupeKey: string;
  /** The dedupe key without the rule: candidates of one subject compete (precedence.ts). */
  subjectKey: string;
};

export type Skip = { ruleId: string | null; ruleName: string | null; reason: string };

export type MatchResult = {
  /** The trigger kind the event maps to; null when it can never dispatch (e.g. a PR update). */
  triggerKind: TriggerKind | null;
  /** Set when the whole event was refused (no permission, closed PR...): record it as a drop. */
  refusal: string | null;
  candidates: Candidate[];
  skipped: Skip[];
};

const SOURCE: Record<TriggerKind, RunSource> = {
  failed_check: "failed_check",
  pr_comment: "pr_comment",
  label: "label",
  check_rerun: "check_rerun",
  release: "release",
  flaky_scan: "flaky_scan",
  manual: "manual",
};

export function matchTriggers(input: MatchInput): MatchResult {
  const subject = subjectOf(input.event, input.repository, input.facts ?? {}, input.options ?? {});
  if (subject.kind === "none") {
    return { triggerKind: null, refusal: null, candidates: [], skipped: [{ ruleId: null, ruleName: null, reason: subject.reason }] };
  }
  const rules = input.rules.filter((r) => r.kind === subject.kind);
  if (subject.refusal !== null) {
    return {
      triggerKind: subject.kind,
      refusal: rules.length > 0 ? subject.refusal : null,
      candidates: [],
      skipped: [{ ruleId: null, ruleName: null, reason: subject.refusal }],
    };
  }
  if (rules.length === 0) {
    return {
      triggerKind: subject.kind,
      refusal: null,
      candidates: [],
      skipped: [{ ruleId: null, ruleName: null, reason: `no ${subject.kind} rules are configured` }],
    };
  }

  const candidates: Candidate[] = [];
  const skipped: Skip[] = [];
  for (const rule of rules) {
    const miss = missOf(rule, subject, input.repository);
    if (miss !== null) {
      skipped.push({ ruleId: rule.id, ruleName: rule.name, reason: miss });
      continue;
    }
    const keys = dedupeKeyFor(subject, rule, input.repository);
    if ("missing" in keys) {
      skipped.push({ ruleId: rule.id, ruleName: rule.name, reason: keys.missing });
      continue;
    }
    const { action, why } = resolveAction(subject.kind, rule, input.repository);
    const matchedOn = setKeys(rule);
    const release = subject.kind === "release" ? subject.release : null;
    candidates.push({
      ruleId: rule.id,
      ruleName: rule.name,
      triggerKind: subject.kind,
      source: SOURCE[subject.kind],
      taskKind: rule.taskKind,
      stackId: subject.stackId ?? rule.stackId,
      action,
      reason: `${subject.summary} matched rule ${JSON.stringify(rule.name)} (${
        matchedOn.length === 0 ? "no match keys: any" : `on ${matchedOn.join(", ")}`
      }); ${why}`,
      matchedOn,
      keyVerdicts: subject.kind === "release" ? releaseVerdicts(rule, release) : [],
      gaps: release ? releaseGaps(rule, release) : [],
      releaseRef: release ? { tag: release.tag, version: release.version } : null,
      dedupeKey: keys.dedupeKey,
      subjectKey: keys.subjectKey,
    });
  }
  return { triggerKind: subject.kind, refusal: null, candidates, skipped };
}

/** Why the rule does not match the subject, or null when it does. Keys are checked in order. */
function missOf(rule: TriggerRule, subject: Subject, repository: RepositoryFacts): Miss {
  if (!rule.enabled) return "rule is disabled";
  const inapplicable = setKeys(rule).filter((k) => !APPLICABLE_KEYS[subject.kind].includes(k));
  if (inapplicable.length > 0) return `${subject.kind} events cannot match on ${inapplicable.join(", ")}`;
  if (subject.ruleId !== null && rule.id !== subject.ruleId) return "the request named another rule";
  if (subject.taskKind !== null && rule.taskKind !== subject.taskKind) {
    return `task kind: the request is for ${subject.taskKind}, the rule starts ${rule.taskKind}`;
  }
  return (
    matchRepository(rule, repository) ??
    matchExact("workflow", rule.workflow, subject.workflow) ??
    matchJob(rule.job, subject.job) ??
    matchExact("step", rule.step, subject.step) ??
    matchBranch(rule.branchGlob, subject.branch, subject.kind === "release" ? "tag" : "branch") ??
    matchPaths(rule.pathFilters, subject.paths) ??
    matchSignature(rule.failureSignature, subject.failureSignature) ??
    (subject.kind === "release" ? (releaseVerdicts(rule, subject.release).find((v) => !v.matched)?.detail ?? null) : null)
  );
}

/**
 * The spec's defaults. A failed check auto-runs only when both the rule and the repository's
 * policy say so; otherwise it is a suggestion a person starts. Comments, labels, manual requests
 * and reruns are explicit requests by a permitted person (or an approval), so they run. Releases
 * and flaky scans follow the rule (both only produce reports until a write-back is approved).
 */
export function resolveAction(
  kind: TriggerKind,
  rule: Pick<TriggerRule, "action">,
  repository: Pick<RepositoryFacts, "autoRunOnFailedCheck">,
): { action: TriggerAction; why: string } {
  switch (kind) {
    case "failed_check":
      if (rule.action === "auto_run" && repository.autoRunOnFailedCheck) {
        return { action: "auto_run", why: "auto-run: the rule and the repository policy allow it" };
      }
      return rule.action === "auto_run"
        ? { action: "suggest", why: "suggestion: the repository policy does not allow auto-run on failed checks" }
        : { action: "suggest", why: "suggestion: the rule suggests" };
    case "pr_comment":
    case "label":
    case "manual":
    case "check_rerun":
      return { action: "auto_run", why: "auto-run: an explicit request" };
    case "release":
    case "flaky_scan":
      return rule.action === "auto_run"
        ? { action: "auto_run", why: "auto-run: the rule runs it" }
        : { action: "suggest", why: "suggestion: the rule suggests" };
  }
}
