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
  release_gap: "Accept a release readiness gap",
};

/** The kinds a repository may exempt: a release's readiness gap is a person's to accept, never exempted. */
export const EXEMPTABLE_WRITE_BACK_KINDS = WRITE_BACK_KINDS.filter((k) => k !== "release_gap");

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
  writeBackExceptions: z
    .array(zWriteBackKind.refine((k) => k !== "release_gap", "A release's readiness gap is always a person's to accept"))
    .max(20)
    .refine((kinds) => new Set(kinds).size === kinds.length, "Each kind once"),
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

// ---- "Add repository" ----

/** One click of "Add": a retried or double-clicked request with the same id adds one repository. */
const zRequestId = z.uuid("A request id");

/** A branch name git accepts and no option can hide in. */
export const zBranchName = z
  .string()
  .trim()
  .min(1, "Required")
  .max(200, "At most 200 characters")
  .regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._/-]+$/, "A branch name: letters, digits, . _ / -");

/** GitHub's own rules: an owner of 1-39 letters, digits and dashes; a name of 1-100 letters, digits, . _ -. */
export const zGithubFullName = z
  .string()
  .trim()
  .max(140, "At most 140 characters")
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/(?!\.{1,2}$)[A-Za-z0-9_.-]{1,100}$/, "owner/name, as GitHub spells it");

/**
 * "owner/name" or a GitHub URL of the repository (https://github.com/owner/name[.git], with or
 * without a trailing slash, or git@github.com:owner/name.git), read as owner/name.
 */
export const zGithubRepositoryRef = z
  .string()
  .trim()
  .min(1, "Required")
  .max(300, "At most 300 characters")
  .transform((v) => {
    const url = v.match(/^(?:https?:\/\/[^/\s]+\/|git@[^:\s]+:)([^/\s]+\/[^/\s]+?)(?:\.git)?\/?$/);
    return url ? (url[1] as string) : v;
  })
  .pipe(zGithubFullName);

export const zVisibility = z.enum(["public", "private", "internal"]);

/** The command the local CI runs for the repository's check (in its sandbox), or empty for none. */
export const zCheckCommand = z
  .string()
  .trim()
  .max(1000, "At most 1,000 characters")
  .refine((v) => !/[\0\r\n]/.test(v), "One line")
  // Null is what it parses to when empty: the router and then the domain parse the same input.
  .nullable()
  .transform((v) => (v === "" || v === null ? null : v));

export const zRegisterGithubRepositoryInput = z.object({
  requestId: zRequestId.optional(),
  fullName: zGithubRepositoryRef,
  defaultBranch: zBranchName.default("main"),
  visibility: zVisibility.default("private"),
});

/** A local-forge repository: owner and name as the forge folder allows them (no dots alone, no slashes). */
export const zLocalFullName = z
  .string()
  .trim()
  .max(140, "At most 140 characters")
  .regex(/^(?![.-])[A-Za-z0-9._-]{1,39}\/(?![.-])[A-Za-z0-9._-]{1,100}$/, "owner/name: letters, digits, . _ - (not starting with . or -)")
  .refine((v) => !v.endsWith(".git"), "Without .git");

export const zCreateLocalRepositoryInput = z.object({
  requestId: zRequestId,
  fullName: zLocalFullName,
  defaultBranch: zBranchName.default("main"),
  visibility: zVisibility.default("private"),
  checkCommand: zCheckCommand.default(null),
});

export const zRegisterFromInstallationInput = z.object({
  requestId: zRequestId,
  installationId: z.int().positive().max(Number.MAX_SAFE_INTEGER),
  fullName: zGithubFullName,
});

export const zTrustTier = z.enum(["trusted", "untrusted"]);

/** A repository's own details (edit-service.ts says who may change which). */
export const zUpdateRepositoryDetailsInput = z.object({
  repositoryId: zId,
  expectedVersion: z.int().positive(),
  defaultBranch: zBranchName,
  checkCommand: zCheckCommand,
  trustTier: zTrustTier,
  visibility: zVisibility,
});

/** Remove a repository (Airlock admins): its exact name typed to confirm, and why. */
export const zRemoveRepositoryInput = z.object({
  repositoryId: zId,
  confirmFullName: z.string().trim().max(140),
  reason: z.string().trim().min(1, "Say why").max(300, "At most 300 characters"),
});
