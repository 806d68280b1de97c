import { definePolicy } from "../validate";

// Who broke a red check on a pull request an agent worked on? The facts are computed from the CI
// observations recorded before each agent pass (server/domain/fixloop/attribute.ts); the verdict
// is made here, by rules, and stored with the observations as its proof. It steers attention
// only, so in doubt it blames our own edits first: reading our diff costs little, missing our
// own regression leaves the author a broken PR.

const notOurs = [
  { property: "previously_ours", isNot: true },
  { property: "our_edits_since_green", isNot: true },
] as const;

export const attributionPolicy = definePolicy({
  kind: "attribution",
  name: "Red-check attribution",
  description: "Decides whether a failing check on a pull request is ours, was already red, or cannot be placed.",
  subject: "failing_check",
  properties: [
    { name: "has_observations", type: "boolean", description: "Airlock recorded CI before at least one agent pass on this PR." },
    {
      name: "previously_ours",
      type: "boolean",
      description: "An earlier decision made this check ours and it has not been green since (ownership is sticky).",
    },
    {
      name: "our_edits_since_green",
      type: "boolean",
      description: "A pass of ours that left edits lies between the last green observation of this check and the failing head.",
    },
    {
      name: "red_when_we_started",
      type: "boolean",
      description: "The check was already failing at the head our first pass since it was last green started from.",
    },
    {
      name: "our_edits_in_range",
      type: "boolean",
      description: "A pass of ours left edits that are in the failing head, whatever the check looked like before.",
    },
    {
      name: "observed_history",
      type: "string",
      description: "The observations used, oldest first: head, the check's state, whether the pass left edits.",
    },
    {
      name: "attribution",
      type: "enum",
      values: ["ours", "pre_existing", "unknown"],
      rulesOnly: true,
      description: "Whose failure this is, for the next agent's attention.",
    },
  ],
  rules: [
    {
      name: "ownership_is_sticky",
      priority: 100,
      when: { property: "previously_ours", is: true },
      then: { property: "attribution", value: "ours" },
      explanation: "This check was ours and has not been green since, so a failed repair does not hand it back.",
    },
    {
      name: "our_edits_after_green",
      priority: 90,
      when: { all: [{ property: "previously_ours", isNot: true }, { property: "our_edits_since_green", is: true }] },
      then: { property: "attribution", value: "ours" },
      explanation: "Our edits lie between the last green run of this check and the failing head: fix it first.",
    },
    {
      name: "already_red_before_us",
      priority: 80,
      when: { all: [...notOurs, { property: "red_when_we_started", is: true }] },
      then: { property: "attribution", value: "pre_existing" },
      explanation: "The check was already failing before our edits: report it, do not chase it.",
    },
    {
      name: "unplaced_failure_after_our_edits",
      priority: 70,
      when: { all: [...notOurs, { property: "red_when_we_started", isNot: true }, { property: "our_edits_in_range", is: true }] },
      then: { property: "attribution", value: "ours" },
      explanation: "Our edits are in the failing head and nothing shows the check red before them: in doubt, look at our edits first.",
    },
    {
      name: "nothing_places_the_failure",
      priority: 60,
      when: { all: [...notOurs, { property: "red_when_we_started", isNot: true }, { property: "our_edits_in_range", isNot: true }] },
      then: { property: "attribution", value: "unknown" },
      explanation: "No edit of ours is in the failing head and nothing shows it red before us: read its output before assuming either way.",
    },
  ],
  defaults: [
    {
      property: "attribution",
      value: "unknown",
      explanation: "Not enough observations to place this failure: read its output before assuming either way.",
    },
  ],
});
