// Where a run's code comes from, and why Airlock thinks so. Code pushed to a branch of the
// repository itself (a push, a pull request from one of its branches, a tag, the local forge)
// is trusted as the repository's trust tier says; a fork's head is untrusted; so is code whose
// origin Airlock cannot name (a workflow_job payload names no head repository: then a pull
// request record at that head, or a recorded push of that commit, decides).
import type { CodeOrigin } from "@/server/db/generated/enums";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";

export type Origin = { kind: CodeOrigin; reason: string };

/** The bundle's `ref.isFork` and the run's `isFork`: true for a fork, null when unknown. */
export const isForkOf = (origin: Origin): boolean | null => (origin.kind === "fork" ? true : origin.kind === "repository" ? false : null);

export type OriginEvidence = {
  /** The pull request the event is about, from the payload or Airlock's record. */
  pullRequest: { number: number; isFork: boolean | null; headRef: string; headRepoFullName: string | null } | null;
  /** A recorded push of the head commit to a branch of the repository. */
  pushed: { branch: string; pusher: string } | null;
};

const short = (sha: string) => sha.slice(0, 12);

function fromPullRequest(pr: NonNullable<OriginEvidence["pullRequest"]>): Origin | null {
  if (pr.isFork === true) return { kind: "fork", reason: `pull request #${pr.number} comes from the fork ${pr.headRepoFullName ?? "(deleted)"}` };
  if (pr.isFork === false) return { kind: "repository", reason: `pull request #${pr.number} comes from the repository's branch ${pr.headRef}` };
  return null;
}

function fromPush(pushed: OriginEvidence["pushed"], sha: string): Origin | null {
  return pushed ? { kind: "repository", reason: `${short(sha)} was pushed to the repository's branch ${pushed.branch} by ${pushed.pusher}` } : null;
}

export function decideOrigin(event: DispatchableEvent, evidence: OriginEvidence): Origin {
  const { pullRequest: pr } = evidence;
  switch (event.type) {
    case "failed_check": {
      if (event.origin === "local") return { kind: "repository", reason: "a check of the local forge's own repository" };
      if (event.isFork === true) {
        const why =
          event.via === "workflow_run"
            ? "the workflow run's head repository is a fork (or was deleted)"
            : event.via === "check_run"
              ? "the check suite's head branch is in a fork"
              : "the payload says the head is a fork";
        return { kind: "fork", reason: why };
      }
      if (event.isFork === false) {
        return event.pullRequests.length > 0
          ? (fromPullRequest({ ...event.pullRequests[0]!, isFork: false }) as Origin)
          : { kind: "repository", reason: `the check ran on the repository's branch ${event.headBranch ?? "(unnamed)"}` };
      }
      // workflow_job: the payload cannot tell.
      const known = (pr && fromPullRequest(pr)) ?? fromPush(evidence.pushed, event.headSha);
      return (
        known ?? {
          kind: "unknown",
          reason: `a ${event.via.replace("_", " ")} payload names no head repository, and Airlock has seen neither a pull request at ${short(event.headSha)} nor a push of it`,
        }
      );
    }
    case "pr_comment":
    case "pr_labeled":
    case "pr_updated":
    case "pr_review":
      return (pr && fromPullRequest(pr)) ?? { kind: "unknown", reason: `pull request #${event.pullRequest.number} is not recorded yet: its head repository is unknown` };
    case "manual":
    case "check_rerun":
      if (pr) return fromPullRequest(pr) ?? { kind: "unknown", reason: `pull request #${pr.number}: its head repository is unknown` };
      if (event.pullRequestNumber !== null) return { kind: "unknown", reason: `pull request #${event.pullRequestNumber} is not recorded: its head repository is unknown` };
      return { kind: "repository", reason: `${short(event.headSha)} of the repository, named by ${event.type === "manual" ? event.actor.login : "Airlock"}` };
    case "release":
      return { kind: "repository", reason: `the repository's tag ${event.tag}` };
    case "flaky_scan":
      return { kind: "repository", reason: `failures on the repository's ${event.branch ? `branch ${event.branch}` : "branches"}` };
    case "branch_push":
      return { kind: "repository", reason: `pushed to the repository's branch ${event.branch}` };
  }
}
