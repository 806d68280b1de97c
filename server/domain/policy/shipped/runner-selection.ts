import { definePolicy } from "../validate";

// Where an attempt runs and what it may hold. One policy, two decided properties, each with its
// own rules and fail-closed default: the pool's trust tier, and whether privileged secrets and
// service accounts are allowed. Both read the same facts, so "untrusted code never holds
// privileged credentials" is stated by rules on both sides, not by chaining one decision into
// the other.

export const runnerSelectionPolicy = definePolicy({
  kind: "runner_selection",
  name: "Runner selection",
  description: "Decides the trust tier of the runner pool and whether privileged credentials are allowed.",
  subject: "dispatch_attempt",
  properties: [
    { name: "is_fork", type: "boolean", description: "The code under test comes from a fork's pull request." },
    {
      name: "ref_trusted",
      type: "boolean",
      description: "The ref belongs to the repository and is trusted (for example a protected branch).",
    },
    {
      name: "task_kind",
      type: "enum",
      values: ["diagnose", "repair", "triage", "release_review"],
      description: "What the run was dispatched to do.",
    },
    {
      name: "stack_requests_privileged",
      type: "boolean",
      description: "The agent stack asks for privileged secrets or a privileged service account.",
    },
    {
      name: "pool_trust_tier",
      type: "enum",
      values: ["trusted", "untrusted"],
      rulesOnly: true,
      description: "The trust tier of the runner pool the attempt runs on.",
    },
    {
      name: "privileged_credentials",
      type: "boolean",
      rulesOnly: true,
      description: "Whether privileged secrets and a privileged service account may be granted.",
    },
  ],
  rules: [
    {
      name: "fork_runs_untrusted",
      priority: 100,
      // isNot false: a run whose fork status is unknown is treated as a fork.
      when: { property: "is_fork", isNot: false },
      then: { property: "pool_trust_tier", value: "untrusted" },
      explanation: "Code from a fork, or of unknown origin, runs on an untrusted pool.",
    },
    {
      name: "untrusted_ref_runs_untrusted",
      priority: 100,
      when: {
        all: [
          { property: "is_fork", is: false },
          { property: "ref_trusted", isNot: true },
        ],
      },
      then: { property: "pool_trust_tier", value: "untrusted" },
      explanation: "The ref is not trusted, so the run goes to an untrusted pool.",
    },
    {
      name: "trusted_ref_runs_trusted",
      priority: 50,
      when: {
        all: [
          { property: "is_fork", is: false },
          { property: "ref_trusted", is: true },
        ],
      },
      then: { property: "pool_trust_tier", value: "trusted" },
      explanation: "The repository's own trusted ref may run on a trusted pool.",
    },
    {
      name: "untrusted_code_gets_no_privilege",
      priority: 100,
      when: {
        any: [
          { property: "is_fork", isNot: false },
          { property: "ref_trusted", isNot: true },
        ],
      },
      then: { property: "privileged_credentials", value: false },
      explanation: "Code from a fork or an untrusted ref never holds privileged secrets or service accounts.",
    },
    {
      name: "read_only_task_gets_no_privilege",
      priority: 80,
      when: {
        all: [
          { property: "is_fork", is: false },
          { property: "ref_trusted", is: true },
          { none: [{ property: "task_kind", inList: ["repair", "release_review"] }] },
        ],
      },
      then: { property: "privileged_credentials", value: false },
      explanation: "Diagnosis and triage only read and report, so they get no privileged credentials.",
    },
    {
      name: "privileged_when_requested",
      priority: 50,
      when: {
        all: [
          { property: "is_fork", is: false },
          { property: "ref_trusted", is: true },
          { property: "task_kind", inList: ["repair", "release_review"] },
          { property: "stack_requests_privileged", is: true },
        ],
      },
      then: { property: "privileged_credentials", value: true },
      explanation: "A repair or release review of trusted code may use the privileged credentials its stack asks for.",
    },
    {
      name: "privilege_not_requested",
      priority: 40,
      when: {
        all: [
          { property: "is_fork", is: false },
          { property: "ref_trusted", is: true },
          { property: "task_kind", inList: ["repair", "release_review"] },
          { property: "stack_requests_privileged", isNot: true },
        ],
      },
      then: { property: "privileged_credentials", value: false },
      explanation: "The stack did not ask for privileged credentials, so none are given.",
    },
  ],
  defaults: [
    {
      property: "pool_trust_tier",
      value: "untrusted",
      explanation: "Nothing established that this run is trusted, so it runs on an untrusted pool.",
    },
    {
      property: "privileged_credentials",
      value: false,
      explanation: "Nothing established that privileged credentials are needed and safe, so none are given.",
    },
  ],
});
