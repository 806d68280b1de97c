import type { Presented } from "@/server/domain/approvals/schemas";
import { Field } from "./fields";

// What a rerun_workflow approval reruns, as frozen when it was asked for: the check, how much of
// it (GitHub: every failed job, or the failed job alone; local: the whole check, all the local CI
// can do), the commit it last ran on, and the approved fix it follows (the check_rerun's key).

const scopeWords: Record<NonNullable<Presented["rerun"]>["scope"], string> = {
  failed_jobs: "every failed job of the workflow run",
  failed_job: "only the failed job",
  whole_check: "the whole check (the local CI cannot rerun a single step)",
};

export function RerunPlanView({ plan }: { plan: NonNullable<Presented["rerun"]> }) {
  return (
    <section aria-label="Rerun" className="space-y-2">
      <h2 className="font-medium">Check to rerun</h2>
      <p className="text-sm" data-testid="rerun-summary">{plan.summary}</p>
      <dl className="grid gap-3 sm:grid-cols-2">
        <Field label="Check">{plan.checkName}</Field>
        <Field label="Reruns">{scopeWords[plan.scope]}{plan.scope === "failed_job" && plan.jobName ? `: ${plan.jobName} (job ${plan.jobExternalId ?? "?"})` : ""}</Field>
        <Field label="Last ran on"><span className="font-mono text-xs">{plan.headSha.slice(0, 12)}{plan.headBranch ? ` (${plan.headBranch})` : ""}</span></Field>
        <Field label="After the approved fix"><span className="font-mono text-xs break-all">{plan.approvedArtifactDigest ?? "none: no approved fix was pushed by this run"}</span></Field>
      </dl>
    </section>
  );
}
