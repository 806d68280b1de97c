// The repository settings forms' schemas: the procedures validate with these and the forms use
// the same ones. Nothing here needs Node.
import { z } from "zod";
import { zId } from "@/server/lib/ids";
import { WRITE_BACK_KINDS, zRepoRole, zWriteBackKind } from "@/server/domain/ci-events/schemas";

export { WRITE_BACK_KINDS } from "@/server/domain/ci-events/schemas";

export const WRITE_BACK_LABELS: Record<(typeof WRITE_BACK_KINDS)[number], string> = {
  push_commits: "Push commits",
  update_pr_branch: "Update a PR branch",
  open_pr: "Open a pull request",
  comment: "Comment",
  review: "Review",
  approve_review: "Approve a review",
  rerun_workflow: "Rerun a workflow",
  publish_release: "Publish a release",
  privileged_capability: "Privileged capability (MCP, tool, secret, network)",
  set_labels: "Set pull request labels",
  roll_back: "Roll back a failed deploy (always approved by a person)",
};

/** How the repository rolls back a failed deploy, in the settings form's words. */
export const ROLL_BACK_MODES = [
  { value: "revert", label: "Revert the failing deploy's change", hint: "A revert commit of the commit the failed deploy ran, pushed to its branch like an agent's patch. The approval shows the revert diff. Local forge only for now." },
  { value: "rerun_last_good", label: "Rerun the last good deploy", hint: "The last run of the same deploy check that succeeded before the failure runs again (GitHub: its workflow run is rerun; local: the local CI runs at its commit). Nothing is committed." },
] as const;

/** One forge label name: GitHub allows 50 characters; a comma would split it in a label list. */
const zLabelName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(50, "At most 50 characters")
  .regex(/^[^,\s][^,]*$/, "One label, without commas");

const repositoryPolicyShape = {
  autoRunOnFailedCheck: z.boolean(),
  botCommentsAllowed: z.boolean(),
  twoPersonRule: z.boolean(),
  rollBackMode: z.enum(["revert", "rerun_last_good"]),
  /** Write-back kinds that may proceed without approval on stacks that allow exceptions. */
  writeBackExceptions: z.array(zWriteBackKind).max(20).refine((kinds) => new Set(kinds).size === kinds.length, "Each kind once"),
  botHandle: z
    .string()
    .trim()
    .max(50, "At most 50 characters")
    .regex(/^@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/, "An @handle: letters, digits and dashes"),
  dispatchLabel: zLabelName,
  maxFixAttempts: z.int("A whole number").min(0, "At least 0").max(10, "At most 10"),
  /**
   * What the repository's attempts may spend in one UTC day, in US dollars (null: no daily cap).
   * Each claim reserves its stack's cost cap against it (server/domain/runs/daily-cost-cap.ts).
   */
  dailyCostCapUsd: z
    .number("A number of dollars, or empty for none")
    .min(0.01, "At least $0.01 (empty: no daily cap)")
    .max(100_000, "At most $100,000")
    .refine((v) => Math.abs(Math.round(v * 100) - v * 100) < 1e-6, "Whole cents")
    .nullable(),
  /** The fix-forward loop's escalation flips a PR from this label... */
  agentReadyLabel: zLabelName,
  /** ...to this one, and "re-open for agents" flips it back. */
  humanReadyLabel: zLabelName,
};

// The escalation swaps one label for the other: the same name for both would be no flip at all.
const distinctReadyLabels = (v: { agentReadyLabel: string; humanReadyLabel: string }, ctx: z.RefinementCtx) => {
  if (v.agentReadyLabel.toLowerCase() === v.humanReadyLabel.toLowerCase()) {
    ctx.addIssue({ code: "custom", path: ["humanReadyLabel"], message: "Must differ from the ready-for-agent label" });
  }
};

export const zRepositoryPolicyInput = z.object(repositoryPolicyShape).superRefine(distinctReadyLabels);
export type RepositoryPolicyFormValues = z.input<typeof zRepositoryPolicyInput>;
export type RepositoryPolicy = z.output<typeof zRepositoryPolicyInput>;

export const zUpdateRepositoryPolicyInput = z
  .object({ ...repositoryPolicyShape, repositoryId: zId, expectedVersion: z.int().positive() })
  .superRefine(distinctReadyLabels);

export const zAddMemberInput = z.object({
  repositoryId: zId,
  email: z.email("An email address").max(320).trim().toLowerCase(),
  role: zRepoRole,
});
export type AddMemberFormValues = z.input<typeof zAddMemberInput>;

/** `expectedRole`: the role the form showed; a different current role refuses the change. */
export const zChangeMemberInput = z.object({
  repositoryId: zId,
  userId: zId,
  role: zRepoRole,
  expectedRole: zRepoRole,
});

export const zRemoveMemberInput = z.object({
  repositoryId: zId,
  userId: zId,
  expectedRole: zRepoRole,
});

/** "Run check" in the local CI: one request id per click, so a retry queues nothing twice. */
export const zRunCheckInput = z.object({
  requestId: z.uuid(),
  /** The branch whose tip is checked; empty: the default branch. */
  branch: z
    .string()
    .trim()
    .max(200)
    .regex(/^$|^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/, "A branch name"),
});

/** Disable or enable a repository (its admins): a disabled one dispatches nothing. */
export const zSetRepositoryEnabledInput = z.object({
  repositoryId: zId,
  enabled: z.boolean(),
  /** Why (shown on the repository and on its ignored deliveries); required to disable. */
  reason: z.string().trim().max(300, "At most 300 characters").default(""),
});
