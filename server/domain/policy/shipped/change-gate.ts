import type { Condition } from "../model";
import { definePolicy } from "../validate";

// Does this write-back need a person's approval? Fail-closed twice over: the default is "yes",
// and the rules are written so that every exemption has to be established by facts, while
// unknown or missing facts fall into a rule that requires approval.

/** Write-backs a repository admin may exempt from approval. */
const exemptable = ["push_commits", "update_pr_branch", "open_pr", "comment", "review", "rerun_workflow", "set_labels"];

/**
 * What a run on a fork's or an unnamed origin's code may never write without a person, whatever
 * the repository exempts: commits, a PR, words on a PR, a rerun (which would run the fork's
 * workflows without GitHub's approval for outside contributors). A label flip stays exemptable:
 * triage labels fork PRs too, and a label carries no code or words of the run.
 */
export const untrustedOriginKinds = ["push_commits", "update_pr_branch", "open_pr", "comment", "review", "rerun_workflow"];

const untrustedWrites: Condition = {
  all: [
    { property: "kind", inList: untrustedOriginKinds },
    // Closed world: an unrecorded origin is not the repository's own.
    { property: "run_origin", isNot: "repository" },
  ],
};

export const changeGatePolicy = definePolicy({
  kind: "change_gate",
  name: "Change gate",
  description: "Decides whether a write-back waits for a person's approval.",
  subject: "write_back",
  properties: [
    {
      name: "kind",
      type: "enum",
      values: [
        "push_commits",
        "update_pr_branch",
        "open_pr",
        "comment",
        "review",
        "approve_review",
        "rerun_workflow",
        "publish_release",
        "privileged_capability",
        "set_labels",
        "roll_back",
      ],
      description: "The write-back being requested.",
    },
    {
      name: "approval_mode",
      type: "enum",
      values: ["always", "exceptions_allowed"],
      description: "The agent stack's approval mode.",
    },
    {
      name: "repository_exempts_kind",
      type: "boolean",
      description: "A repository admin exempted this kind of write-back from approval.",
    },
    { name: "is_diagnosis_comment", type: "boolean", description: "The write-back is a comment carrying the run's diagnosis." },
    { name: "bot_comments_allowed", type: "boolean", description: "The repository lets the bot post comments without approval." },
    {
      name: "run_origin",
      type: "enum",
      values: ["repository", "fork", "unknown"],
      description: "Where the run's code came from (a fork's or an unnamed origin's run never writes code or words without a person).",
    },
    // privileged_capability: what the attempt would launch with, so a repository admin's narrower
    // exception is a rule over these facts (e.g. open network for one repository), stored with its proof.
    { name: "repository", type: "string", description: "The repository (owner/name) the write-back or attempt is for." },
    { name: "grants_privileged_secret", type: "boolean", description: "The attempt would receive a privileged secret." },
    { name: "grants_privileged_mcp_server", type: "boolean", description: "The attempt would run a privileged MCP server." },
    { name: "grants_open_network", type: "boolean", description: "The attempt would run with open network." },
    { name: "approval_required", type: "boolean", rulesOnly: true, description: "Whether a person must approve." },
  ],
  rules: [
    {
      name: "unknown_write_back_needs_approval",
      priority: 100,
      when: { property: "kind", isEmpty: true },
      then: { property: "approval_required", value: true },
      explanation: "The kind of write-back is not known, so a person approves it.",
    },
    {
      name: "sensitive_write_back_needs_approval",
      priority: 100,
      when: { property: "kind", inList: ["approve_review", "privileged_capability"] },
      then: { property: "approval_required", value: true },
      explanation: "Approving a review or using a privileged capability always waits for a person.",
    },
    {
      name: "release_publish_needs_a_person",
      priority: 100,
      when: { property: "kind", is: "publish_release" },
      then: { property: "approval_required", value: true },
      explanation: "Publishing a release is privileged: a person approves it after reading its readiness report, whatever the repository or the stack allows.",
    },
    {
      name: "roll_back_needs_a_person",
      priority: 100,
      when: { property: "kind", is: "roll_back" },
      then: { property: "approval_required", value: true },
      explanation: "Rolling back a deploy changes what runs in production: a person approves the revert or the rerun it shows.",
    },
    {
      name: "stack_requires_approval",
      priority: 90,
      when: {
        all: [
          { property: "kind", inList: exemptable },
          // An unrecorded mode counts as "always".
          { property: "approval_mode", isNot: "exceptions_allowed" },
        ],
      },
      then: { property: "approval_required", value: true },
      explanation: "The agent stack asks for approval on every write-back.",
    },
    {
      name: "untrusted_origin_needs_approval",
      priority: 70,
      when: { all: [{ property: "approval_mode", is: "exceptions_allowed" }, untrustedWrites] },
      then: { property: "approval_required", value: true },
      explanation: "The run worked on a fork's code (or code Airlock cannot place), so a person approves what it would write or say.",
    },
    {
      name: "diagnosis_comment_allowed",
      priority: 60,
      when: {
        all: [
          { property: "kind", is: "comment" },
          { property: "approval_mode", is: "exceptions_allowed" },
          { property: "is_diagnosis_comment", is: true },
          { property: "bot_comments_allowed", is: true },
          { property: "run_origin", is: "repository" },
        ],
      },
      then: { property: "approval_required", value: false },
      explanation: "The repository allows the bot's diagnosis comments, and this is one, from a run on the repository's own code.",
    },
    {
      name: "exempted_write_back_proceeds",
      priority: 50,
      when: {
        all: [
          { property: "kind", inList: exemptable },
          { property: "approval_mode", is: "exceptions_allowed" },
          { property: "repository_exempts_kind", is: true },
          { none: [untrustedWrites] },
        ],
      },
      then: { property: "approval_required", value: false },
      explanation: "A repository admin exempted this kind of write-back and the stack allows exceptions.",
    },
    {
      name: "unexempted_write_back_needs_approval",
      priority: 40,
      when: {
        all: [
          { property: "kind", inList: exemptable },
          { property: "approval_mode", is: "exceptions_allowed" },
          { property: "repository_exempts_kind", isNot: true },
          {
            none: [
              {
                all: [
                  { property: "kind", is: "comment" },
                  { property: "is_diagnosis_comment", is: true },
                  { property: "bot_comments_allowed", is: true },
                  { property: "run_origin", is: "repository" },
                ],
              },
              untrustedWrites,
            ],
          },
        ],
      },
      then: { property: "approval_required", value: true },
      explanation: "No exemption covers this write-back, so a person approves it.",
    },
  ],
  defaults: [
    {
      property: "approval_required",
      value: true,
      explanation: "Nothing cleared this write-back, so a person approves it.",
    },
  ],
});
