import { createLoader, parseAsStringLiteral } from "nuqs/server";
import { parseAsText } from "@/components/ui/url-filters";

// The approvals queue's filters in the URL (shared by the page's prefetch and the queue).

export const approvalActions = ["push_commits", "update_pr_branch", "open_pr", "comment", "review", "approve_review", "rerun_workflow", "publish_release", "privileged_capability", "set_labels", "roll_back", "release_gap"] as const;

/** The age filter: requests older than an hour, or a day. */
export const approvalAges = [
  { value: "1h", label: "older than 1 hour", minutes: 60 },
  { value: "1d", label: "older than 1 day", minutes: 1440 },
] as const;

export const approvalFilterParsers = {
  repositoryId: parseAsText(100),
  action: parseAsStringLiteral(approvalActions),
  stack: parseAsText(200),
  age: parseAsStringLiteral(approvalAges.map((a) => a.value)),
};

export const loadApprovalFilters = createLoader(approvalFilterParsers);

type Values = Awaited<ReturnType<typeof loadApprovalFilters>>;

/** What approvals.list and approvals.counts take for these filters. */
export const approvalsFilterInput = (f: Values) => ({
  repositoryId: f.repositoryId ?? undefined,
  action: f.action ?? undefined,
  stack: f.stack ?? undefined,
  olderThanMinutes: approvalAges.find((a) => a.value === f.age)?.minutes,
});
