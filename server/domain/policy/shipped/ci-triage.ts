import { definePolicy } from "../validate";

// What an agent may do about a red build. Rebuilt from the CI-triage seed in Airlock's format:
// the disposition is decided here, by rules, and a rerun is something the runtime performs
// because a rule said so, never a call the model makes.

export const ciTriagePolicy = definePolicy({
  kind: "ci_triage",
  name: "CI failure triage",
  description: "Decides the disposition of a failed CI run: rerun once, fix forward, escalate or roll back.",
  subject: "build_failure",
  properties: [
    {
      name: "failing_stage",
      type: "enum",
      values: ["lint", "test", "build", "deploy"],
      cardinality: "1",
      description: "The CI stage that failed.",
    },
    { name: "known_flaky", type: "boolean", description: "The failing test is on the repository's tracked flaky list." },
    { name: "reproduces_on_rerun", type: "boolean", description: "The failure happened again when the job was rerun." },
    { name: "prior_reruns", type: "integer", min: 0, description: "How many times this failure has already been rerun." },
    {
      name: "disposition",
      type: "enum",
      values: ["rerun_once", "fix_forward", "escalate_to_owner", "roll_back"],
      rulesOnly: true,
      description: "What happens to the failure.",
    },
  ],
  rules: [
    {
      name: "deploy_failure_rolls_back",
      priority: 100,
      when: { property: "failing_stage", is: "deploy" },
      then: { property: "disposition", value: "roll_back" },
      explanation: "A failed deploy is rolled back first; the investigation comes after.",
    },
    {
      name: "flaky_test_gets_one_rerun",
      priority: 50,
      when: {
        all: [
          // Guard: a reproduced failure belongs to flaky_failure_reproduced_escalates, stated
          // here instead of left to priority.
          { property: "reproduces_on_rerun", isNot: true },
          { property: "failing_stage", is: "test" },
          { property: "known_flaky", is: true },
          { property: "prior_reruns", below: 1 },
        ],
      },
      then: { property: "disposition", value: "rerun_once" },
      explanation: "The test is on the flaky list and has not been rerun yet, so it gets exactly one rerun.",
    },
    {
      name: "flaky_failure_reproduced_escalates",
      priority: 60,
      when: {
        all: [
          // Guard: without it this rule overlapped deploy_failure_rolls_back.
          { property: "failing_stage", isNot: "deploy" },
          { property: "known_flaky", is: true },
          { property: "reproduces_on_rerun", is: true },
        ],
      },
      then: { property: "disposition", value: "escalate_to_owner" },
      explanation: "The listed-flaky failure came back on rerun; it is a real failure now and goes to its owner.",
    },
    {
      name: "deterministic_failure_fixes_forward",
      priority: 10,
      when: {
        all: [
          { property: "failing_stage", inList: ["lint", "test", "build"] },
          { property: "known_flaky", is: false },
        ],
      },
      then: { property: "disposition", value: "fix_forward" },
      explanation: "A genuine lint, test or build failure: the agent may propose a fix, which the change gate then judges.",
    },
    // Completeness cover: the two regions below matched no rule until the completeness check
    // named them. Both are failures nobody classified, so a person decides, not the agent.
    {
      name: "unclassified_failure_escalates",
      priority: 40,
      when: {
        all: [
          { property: "failing_stage", isNot: "deploy" },
          { property: "known_flaky", isEmpty: true },
        ],
      },
      then: { property: "disposition", value: "escalate_to_owner" },
      explanation: "Nobody checked this failure against the flaky list, so its owner decides rather than the agent.",
    },
    {
      name: "flaky_without_rerun_left_escalates",
      priority: 40,
      when: {
        all: [
          { property: "failing_stage", isNot: "deploy" },
          { property: "known_flaky", is: true },
          { property: "reproduces_on_rerun", isNot: true },
          {
            any: [
              { property: "failing_stage", isNot: "test" },
              { none: [{ property: "prior_reruns", below: 1 }] },
            ],
          },
        ],
      },
      then: { property: "disposition", value: "escalate_to_owner" },
      explanation: "A flaky-listed failure with no rerun to spend, or outside the test stage, goes to its owner.",
    },
  ],
  defaults: [
    {
      property: "disposition",
      value: "escalate_to_owner",
      explanation: "No rule classified this failure, so a person decides what happens to it.",
    },
  ],
});
