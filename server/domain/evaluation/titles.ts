// Run titles, in the console's voice: "Diagnose unit-tests failure on PR #412".
import type { TaskKind } from "@/server/db/generated/enums";
import type { Candidate } from "@/server/domain/triggers/matcher";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { Facts } from "./facts";

const VERB: Record<TaskKind, string> = { diagnose: "Diagnose", repair: "Repair", triage: "Triage", release_review: "Review release" };

export function runTitle(opts: { event: DispatchableEvent; candidate: Candidate; facts: Facts }): string {
  const { event, candidate, facts } = opts;
  const verb = VERB[candidate.taskKind];
  const where =
    facts.pullRequestNumber !== null
      ? `on ${facts.origin.kind === "fork" ? "fork " : ""}PR #${facts.pullRequestNumber}`
      : `on ${facts.headBranch ?? facts.headSha?.slice(0, 7) ?? "an unknown ref"}`;
  const title = (() => {
    switch (event.type) {
      case "failed_check": {
        const what = event.jobName ?? event.checkName ?? event.workflowName ?? "check";
        return candidate.taskKind === "repair" ? `${verb} failing ${what} ${where}` : `${verb} ${what} failure ${where}`;
      }
      case "pr_comment":
        return `${verb} ${where} (requested by ${event.actor.login})`;
      case "pr_labeled":
        return `${verb} ${where} (label ${event.label})`;
      case "release":
        return `${verb} ${event.tag}`;
      case "flaky_scan":
        return `${verb} flaky failures ${event.signature}`;
      case "check_rerun":
        return `Verify ${event.target.checkName} after run ${event.originalRunId}`;
      case "manual":
        return `${verb} ${where}`;
      default:
        return `${verb} ${where}`;
    }
  })();
  return title.slice(0, 300);
}
