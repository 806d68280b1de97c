// Inputs the matcher takes besides the event and the rules.
import type { ReleaseFacts } from "./release-facts";

export type RepositoryFacts = {
  id: string;
  fullName: string;
  /** Repository policy: may a failed check start a run without a person? */
  autoRunOnFailedCheck: boolean;
  /** The label that dispatches (Repository.dispatchLabel, default "agent:diagnose"). */
  dispatchLabel: string;
};

/** What the caller learned beyond the webhook payload (from its records or the forge API). */
export type EventFacts = {
  changedFiles?: readonly string[] | null;
  failureSignature?: string | null;
  /** Failed check: failureContextDigest of its log excerpt and artifacts (default: none known). */
  contextDigest?: string | null;
  pullRequestNumber?: number | null;
  headSha?: string | null;
  headBranch?: string | null;
  /** Release: digests of the release's artifacts (defaults to the event's asset digests). */
  artifactDigests?: readonly string[] | null;
  /** Release: what the release keys and its readiness gaps are decided on (null: unknown). */
  release?: ReleaseFacts | null;
};

export type MatchOptions = {
  /**
   * A failed workflow run (pipeline level) normally triggers nothing: each failing job arrives as
   * its own job-level event, with its step. Only failures with no job event (startup_failure,
   * timed_out) match. Set this when the forge sends no job-level events.
   */
  matchPipelineFailures?: boolean;
};
