// Where a run's code comes from, and why Airlock thinks so. Code pushed to a branch of the
// repository itself (a push, a pull request from one of its branches, a tag) is trusted as the
// repository's trust tier says; a fork's head is untrusted; so is code whose origin Airlock
// cannot name. The local forge is no exception: its CI reports whether a branch of the
// repository holds the commit or only a fork's pull request head does (forges/local/
// commit-origin.ts). Fork evidence wins over anything else (a pull request record at the head
// says fork: fork). When the event cannot tell (a workflow_job payload names no head
// repository), a pull request record at that head, or a recorded push of that commit, decides.
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
  /** check_rerun: the run whose check is rerun, with its origin (null: not recorded). */
  originalRun?: { number: number; origin: CodeOrigin } | null;
  /** release: the branches its tag's commit is on (null: unknown; local forge reads them all). */
  releaseBranches?: string[] | null;
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
      // Fork evidence wins, whoever reports it: the payload, or a pull request record at the head.
      if (event.isFork === true) {
        const why =
          event.via === "workflow_run"
            ? "the workflow run's head repository is a fork (or was deleted)"
            : event.via === "check_run"
              ? "the check suite's head branch is in a fork"
              : event.via === "local_ci"
                ? `the local forge holds ${short(event.headSha)} only as a fork's pull request head`
                : "the payload says the head is a fork";
        const forkPr = event.pullRequests.find((p) => p.isFork === true);
        return forkPr ? (fromPullRequest(forkPr) as Origin) : { kind: "fork", reason: why };
      }
      if (pr?.isFork === true) return fromPullRequest(pr) as Origin;
      if (event.isFork === false) {
        if (event.pullRequests.length > 0) return fromPullRequest({ ...event.pullRequests[0]!, isFork: false }) as Origin;
        return event.via === "local_ci"
          ? { kind: "repository", reason: `${short(event.headSha)} is on the repository's branch ${event.headBranch ?? "(unnamed)"} in the local forge` }
          : { kind: "repository", reason: `the check ran on the repository's branch ${event.headBranch ?? "(unnamed)"}` };
      }
      // workflow_job, or a local commit no branch holds: the payload cannot tell.
      const known = (pr && fromPullRequest(pr)) ?? fromPush(evidence.pushed, event.headSha);
      return (
        known ?? {
          kind: "unknown",
          reason:
            event.via === "local_ci"
              ? `no branch of the repository holds ${short(event.headSha)}, and no pull request record places it`
              : `a ${event.via.replace("_", " ")} payload names no head repository, and Airlock has seen neither a pull request at ${short(event.headSha)} nor a push of it`,
        }
      );
    }
    case "pr_comment":
    case "pr_labeled":
    case "pr_updated":
    case "pr_review":
      return (pr && fromPullRequest(pr)) ?? { kind: "unknown", reason: `pull request #${event.pullRequest.number} is not recorded yet: its head repository is unknown` };
    case "check_rerun": {
      // A rerun is no more trusted than the run it follows: a fork's rerun stays a fork's.
      const fromPr = pr ? fromPullRequest(pr) : null;
      if (fromPr?.kind === "fork") return fromPr;
      const original = evidence.originalRun;
      if (!original) return { kind: "unknown", reason: `the run ${event.originalRunId} whose check is rerun is not recorded` };
      if (original.origin !== "repository") return { kind: original.origin, reason: `a rerun of run #${original.number}'s check, whose code ${original.origin === "fork" ? "comes from a fork" : "Airlock cannot place"}` };
      return fromPr ?? { kind: "repository", reason: `a rerun of run #${original.number}'s check, on the repository's own code` };
    }
    case "manual":
      if (pr) return fromPullRequest(pr) ?? { kind: "unknown", reason: `pull request #${pr.number}: its head repository is unknown` };
      if (event.pullRequestNumber !== null) return { kind: "unknown", reason: `pull request #${event.pullRequestNumber} is not recorded: its head repository is unknown` };
      return { kind: "repository", reason: `${short(event.headSha)} of the repository, named by ${event.actor.login}` };
    case "release": {
      // A tag may name any commit the forge holds, a fork's pull request head included.
      const fromPr = pr ? fromPullRequest(pr) : null;
      if (fromPr?.kind === "fork") return { kind: "fork", reason: `the tag ${event.tag} names the head of ${fromPr.reason}` };
      if (evidence.releaseBranches?.length === 0) return { kind: "unknown", reason: `the tag ${event.tag} names a commit on no branch of the repository` };
      return { kind: "repository", reason: `the repository's tag ${event.tag}` };
    }
    case "flaky_scan":
      return { kind: "repository", reason: `failures on the repository's ${event.branch ? `branch ${event.branch}` : "branches"}` };
    case "branch_push":
      return { kind: "repository", reason: `pushed to the repository's branch ${event.branch}` };
  }
}
