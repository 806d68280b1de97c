import { describe, expect, it } from "vitest";
import { checkPolicy } from "../policy/checks/check-policy";
import { attributionPolicy } from "../policy/shipped/attribution";
import { attributeLocally, attributionFacts, type Observation, type ObservedCheck } from "./attribute";

let clock = Date.parse("2026-11-30T00:00:00Z");
function obs(id: string, headSha: string, build: ObservedCheck["conclusion"] | "unseen", leftEdits: boolean): Observation {
  clock += 60_000;
  return { id, headSha, observedAt: new Date(clock), checks: build === "unseen" ? [] : [{ name: "build", conclusion: build }], leftEdits };
}

type Case = { name: string; history: () => Observation[]; failingAt: string; previous?: { attribution: string; at: number }; want: string; rule: string | null };

const cases: Case[] = [
  { name: "our edit then red", history: () => [obs("o1", "h1", "success", true)], failingAt: "h2", want: "ours", rule: "our_edits_after_green" },
  { name: "red before we started", history: () => [obs("o1", "h1", "failure", true)], failingAt: "h2", want: "pre_existing", rule: "already_red_before_us" },
  {
    name: "the red result belongs to the head our pass started from",
    history: () => [obs("o1", "h1", null, true)],
    failingAt: "h1",
    want: "pre_existing",
    rule: "already_red_before_us",
  },
  {
    name: "a person pushed between our pass and the red check: still ours (in range)",
    history: () => [obs("o1", "h1", "success", true)],
    failingAt: "h3-person",
    want: "ours",
    rule: "our_edits_after_green",
  },
  { name: "no observations", history: () => [], failingAt: "h1", want: "unknown", rule: "nothing_places_the_failure" },
  {
    name: "sticky ownership across a failed repair",
    history: () => [obs("o1", "h1", "success", true), obs("o2", "h2", "failure", true)],
    failingAt: "h3",
    want: "ours",
    rule: "our_edits_after_green",
  },
  {
    name: "sticky ownership from an earlier decision even when the green observation is gone",
    history: () => [obs("o2", "h2", "failure", true)],
    failingAt: "h3",
    previous: { attribution: "ours", at: 0 },
    want: "ours",
    rule: "ownership_is_sticky",
  },
  {
    name: "green clears ownership: red again after a green with no edits of ours is not ours",
    history: () => [obs("o1", "h1", "success", true), obs("o2", "h2", "failure", true), obs("o3", "h3", "success", false)],
    failingAt: "h4",
    previous: { attribution: "ours", at: 0 },
    want: "unknown",
    rule: "nothing_places_the_failure",
  },
  {
    name: "green clears ownership: a pass that then starts from the new red reports it as pre-existing",
    history: () => [obs("o1", "h1", "success", true), obs("o3", "h3", "success", false), obs("o4", "h4", "failure", true)],
    failingAt: "h5",
    previous: { attribution: "ours", at: 0 },
    want: "pre_existing",
    rule: "already_red_before_us",
  },
  {
    name: "a pass that left no edits is never blamed",
    history: () => [obs("o1", "h1", "success", false)],
    failingAt: "h2",
    want: "unknown",
    rule: "nothing_places_the_failure",
  },
  {
    name: "in doubt (the check was never seen before our edits), ours",
    history: () => [obs("o1", "h1", "unseen", true)],
    failingAt: "h2",
    want: "ours",
    rule: "unplaced_failure_after_our_edits",
  },
  {
    name: "in doubt (still running when we started), ours",
    history: () => [obs("o1", "h1", null, true)],
    failingAt: "h2",
    want: "ours",
    rule: "unplaced_failure_after_our_edits",
  },
];

describe("red-check attribution", () => {
  it.each(cases)("$name -> $want", ({ history, failingAt, previous, want, rule }) => {
    const observations = history();
    const first = observations[0]?.observedAt.getTime() ?? clock;
    const decision = attributeLocally({
      failing: { name: "build", headSha: failingAt },
      observations,
      previous: previous ? { attribution: previous.attribution, decidedAt: new Date(first + previous.at) } : null,
    });
    expect(decision.value).toBe(want);
    expect(decision.rule).toBe(rule);
  });

  it("lists the observations it used, and only those before the failing head", () => {
    const history = [obs("o1", "h1", "success", true), obs("o2", "h2", "failure", true), obs("o3", "h3", "failure", false)];
    const { used, facts } = attributionFacts({ failing: { name: "build", headSha: "h2" }, observations: history });
    expect(used).toEqual(["o1", "o2"]);
    expect(facts.observed_history?.value).toBe("h1 build=success +edits; h2 build=failure +edits -> build red at h2");
    // o1's edits are in h2 and it saw build green: ours.
    expect(attributeLocally({ failing: { name: "build", headSha: "h2" }, observations: history }).value).toBe("ours");
  });

  it("a green result after the earlier decision clears stickiness even without a pass observing it", () => {
    const history = [obs("o2", "h2", "failure", true)];
    const decidedAt = new Date(history[0]!.observedAt.getTime() - 1000);
    const input = { failing: { name: "build", headSha: "h3" }, observations: history, previous: { attribution: "ours", decidedAt } };
    expect(attributeLocally(input).value).toBe("ours");
    expect(attributeLocally({ ...input, lastGreenAt: new Date(decidedAt.getTime() + 500) }).value).toBe("pre_existing");
  });

  it("the shipped policy passes its own checks: no conflicts, no gaps, no vacuous rules", () => {
    expect(checkPolicy(attributionPolicy)).toEqual({ conflicts: [], gaps: [], vacuous: [] });
  });
});
