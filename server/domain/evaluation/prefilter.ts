// The prefilter: a screened delivery (load.ts `screenDelivery`: repository, event, who asked; no
// facts) whose outcome the facts cannot change is decided here, without reading facts, assembling
// anything or opening the evaluation's transaction. It holds for an event that writes nothing but
// runs and drops (no CI record, no triage, no fix loop, no cancel) when no enabled rule of its
// trigger kind applies to the repository: the matcher then reports only the subject's own word
// (its refusal, or "no <kind> rules are configured"), and the subject reads the event alone.
// The plan comes from planEvaluation, the function the live path and the dry run use, so the
// stored outcome is the one the full evaluation stores (prefilter.int.test.ts runs both).
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";
import { decideOrigin } from "./origin";
import type { Facts } from "./facts";
import type { ScreenedEvent } from "./load";
import { planEvaluation, type EvaluationPlan } from "./plan";

/**
 * Event types whose full evaluation writes nothing but what its rules make: records.ts writes no
 * record for them, triage reads only failed checks, the fix loop only reviews and failed checks.
 * An `@agent cancel` comment cancels runs whatever the rules say: never prefiltered.
 */
function rulesOnly(event: DispatchableEvent): boolean {
  switch (event.type) {
    case "pr_comment":
      return event.command !== "cancel";
    case "release":
    case "check_rerun":
    case "manual":
    case "flaky_scan":
      return true;
    default:
      return false;
  }
}

/** Facts as the matcher sees them when nothing is known: unused when no rule of the kind applies. */
function noFacts(screened: ScreenedEvent): Facts {
  return {
    pullRequest: null,
    pullRequestNumber: null,
    headSha: null,
    headBranch: null,
    origin: decideOrigin(screened.event, { pullRequest: null, pushed: null }),
    changedFiles: screened.extras.changedFiles,
    pipeline: null,
    job: null,
    failure: null,
    log: screened.extras.log,
    artifacts: screened.extras.artifacts,
    similarRuns: [],
    contextDigest: null,
    release: null,
  };
}

/**
 * The plan of a delivery no rule can act on, or null when it needs the full evaluation. `rules`
 * are the repository's live rules (plan.ts `liveRulesFor`).
 */
export function prefilterPlan(screened: ScreenedEvent, rules: readonly TriggerRule[]): EvaluationPlan | null {
  if (!rulesOnly(screened.event)) return null;
  const plan = planEvaluation({ ...screened, facts: noFacts(screened) }, rules);
  // A rule of the event's kind could match on facts (branch, head, paths): evaluate in full.
  if (plan.triggerKind !== null && rules.some((r) => r.kind === plan.triggerKind)) return null;
  if (plan.fire.length > 0 || plan.superseded.length > 0 || plan.refusal !== null) return null;
  return plan;
}
