import type { CheckConclusion } from "@/server/db/generated/enums";
import { evaluate } from "../policy/evaluate";
import { factsFrom, type Facts } from "../policy/facts";
import type { PolicyDecision } from "../policy/decision";
import { attributionPolicy } from "../policy/shipped/attribution";

// The facts of red-check attribution, computed from the CI observations recorded before each
// agent pass on a pull request. Pure: the verdict itself is the attribution policy's (decide()
// stores it with these facts and its proof); `attributeLocally` evaluates the shipped rules for
// tests and previews.

export type ObservedCheck = { name: string; conclusion: CheckConclusion | null };

export type Observation = {
  id: string;
  /** The head the pass started from. */
  headSha: string;
  observedAt: Date;
  checks: ObservedCheck[];
  /** Upper bound: the pass wrote a patch, whether or not it landed. */
  leftEdits: boolean;
};

export type FailingCheck = { name: string; headSha: string };

export type PreviousAttribution = { attribution: string; decidedAt: Date };

export type AttributionInput = {
  failing: FailingCheck;
  observations: readonly Observation[];
  /** The latest stored attribution of this check on this PR, if any. */
  previous?: PreviousAttribution | null;
  /** When this check last completed green on the PR (from CI records), if known. */
  lastGreenAt?: Date | null;
};

export type AttributionFacts = {
  facts: Facts;
  /** The observations the facts were computed from, oldest first. */
  used: string[];
};

const failing = new Set<CheckConclusion>(["failure", "timed_out", "cancelled", "startup_failure", "action_required"]);

function conclusionOf(obs: Observation, check: string): CheckConclusion | null | undefined {
  return obs.checks.find((c) => c.name === check)?.conclusion;
}

const short = (sha: string) => sha.slice(0, 7);

export function attributionFacts(input: AttributionInput): AttributionFacts {
  const { failing: check } = input;
  const history = [...input.observations].sort((a, b) => a.observedAt.getTime() - b.observedAt.getTime());
  // A pass that started AT the failing head put its edits after it: only earlier passes can be
  // in the failing head. A failing head we never started from is placed after every pass (a
  // person may have pushed on top of ours: our edits are still in range).
  const atHead = history.findIndex((o) => o.headSha === check.headSha);
  const range = atHead === -1 ? history : history.slice(0, atHead);

  let lastGreen = -1;
  range.forEach((o, i) => {
    if (conclusionOf(o, check.name) === "success") lastGreen = i;
  });
  // Our window of blame: from the last green observation up to the first pass that already saw
  // the check red (that red was there before that pass's edits).
  const sinceGreen = lastGreen === -1 ? [] : range.slice(lastGreen);
  const seenRed = sinceGreen.findIndex((o) => failing.has(conclusionOf(o, check.name) ?? "success"));
  const window = seenRed === -1 ? sinceGreen : sinceGreen.slice(0, seenRed);
  const ourEditsSinceGreen = window.some((o) => o.leftEdits);
  const afterGreen = lastGreen === -1 ? range : range.slice(lastGreen + 1);
  const firstEdit = afterGreen.find((o) => o.leftEdits);
  const seenAtFirstEdit = firstEdit ? conclusionOf(firstEdit, check.name) : undefined;
  const redWhenWeStarted = firstEdit
    ? seenAtFirstEdit != null && failing.has(seenAtFirstEdit)
    : // No edit of ours since green and the failure is at a head a pass started from: it was red there.
      atHead !== -1;

  const greenAfter = (at: Date) =>
    history.some((o) => o.observedAt > at && conclusionOf(o, check.name) === "success") || (input.lastGreenAt != null && input.lastGreenAt > at);
  const previouslyOurs = input.previous?.attribution === "ours" && !greenAfter(input.previous.decidedAt);

  const used = atHead === -1 ? history : history.slice(0, atHead + 1);
  const described = used
    .map((o) => `${short(o.headSha)} ${check.name}=${conclusionOf(o, check.name) ?? "unseen"}${o.leftEdits ? " +edits" : ""}`)
    .join("; ");
  return {
    facts: factsFrom("system", {
      has_observations: history.length > 0,
      previously_ours: previouslyOurs,
      our_edits_since_green: ourEditsSinceGreen,
      red_when_we_started: redWhenWeStarted,
      our_edits_in_range: afterGreen.some((o) => o.leftEdits) || ourEditsSinceGreen,
      observed_history: `${described || "no observations"} -> ${check.name} red at ${short(check.headSha)}`.slice(0, 2000),
    }),
    used: used.map((o) => o.id),
  };
}

/** The shipped rules over `input`, without storing anything (tests, previews). */
export function attributeLocally(input: AttributionInput): PolicyDecision {
  return evaluate(attributionPolicy, attributionFacts(input).facts);
}
