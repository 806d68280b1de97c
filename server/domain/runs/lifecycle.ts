import { AttemptStatus, RunStatus } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";

// The run and attempt state machines: every legal transition is listed once,
// with why it exists. Services check transitions here before writing a status;
// the UI asks the named predicates why a control is disabled.

export const runStatuses: readonly RunStatus[] = Object.values(RunStatus);
export const attemptStatuses: readonly AttemptStatus[] = Object.values(AttemptStatus);

/** A predicate's answer: allowed, or not with a sentence a person can read. */
export type Verdict = { ok: true } | { ok: false; reason: string };

const yes: Verdict = { ok: true };
const no = (reason: string): Verdict => ({ ok: false, reason });

type TransitionTable<S extends string> = Readonly<Record<S, Readonly<Partial<Record<S, string>>>>>;

/**
 * Legal run transitions, `from -> to -> why`. Anything not listed is illegal.
 * Not listed on purpose: awaiting_approval -> running (a continuation or fix-forward
 * is a resume run whose parent is this one, so each run's transcript ends at the
 * artifacts its approvals refer to), and any way out of succeeded (resume or fork make
 * a new run). awaiting_approval -> queued exists only for a run whose attempt never
 * launched: it waited for a person to approve its privileged capabilities.
 */
export const runTransitions: TransitionTable<RunStatus> = {
  suggested: {
    queued: "a person (or an auto-run rule) dispatched the suggestion",
    cancelled: "a person dismissed the suggestion",
    escalated: "policy could not decide who may run it, so a person must (fail-closed)",
  },
  queued: {
    running: "an attempt started on a runner pool",
    cancelled: "a person cancelled the run before it started",
    failed: "admission refused the run or no attempt could be started",
    escalated: "no rule selected a runner pool, so a person must decide (fail-closed)",
    awaiting_approval: "admission would grant a privileged secret, MCP server or open network; the attempt waits for a person before it launches",
  },
  running: {
    awaiting_approval: "the attempt finished and requested write-backs that need approval",
    succeeded: "the attempt finished with nothing left to approve",
    failed: "the attempt failed, timed out or was lost, and no retry is left",
    cancelled: "a person cancelled the run; its active session is stopped",
    queued: "the attempt was lost or failed retriably and a new attempt is queued",
    escalated: "the agent gave up or the fix budget is spent; a person takes over",
  },
  awaiting_approval: {
    queued: "a person approved the privileged capabilities (or they went stale and are asked again); the attempt is dispatched",
    succeeded: "every approval was decided and the approved write-backs executed",
    failed: "an approved write-back failed to execute, or a person rejected the privileged capabilities the attempt would launch with",
    cancelled: "a person cancelled the run; pending approvals are withdrawn",
    escalated: "approvals were rejected or expired; a person takes over",
  },
  succeeded: {},
  failed: {
    queued: "retry: a person asked for a new attempt",
  },
  cancelled: {
    queued: "retry: a person asked for a new attempt after cancelling",
  },
  escalated: {
    queued: "retry: the person it was escalated to asked for a new attempt",
  },
};

/**
 * Legal attempt transitions. Terminal attempt statuses never change: a late
 * heartbeat from a lost attempt is refused by its fencing token, not revived.
 */
export const attemptTransitions: TransitionTable<AttemptStatus> = {
  queued: {
    starting: "a worker picked the attempt and is preparing its workspace",
    cancelled: "the run was cancelled before the attempt started",
    failed: "admission or scheduling refused the attempt",
    lost: "the worker holding the attempt stopped before starting it",
  },
  starting: {
    running: "the agent session started",
    cancelled: "the run was cancelled while the session was starting",
    failed: "the agent could not start (missing command, bad workspace, pod refused)",
    lost: "the worker stopped heartbeating while starting",
    timed_out: "the wall-clock limit passed while starting (e.g. a pod stuck pending)",
  },
  running: {
    succeeded: "the agent exited cleanly",
    failed: "the agent exited with an error",
    cancelled: "the run was cancelled and the session stopped",
    timed_out: "the wall-clock limit passed and the session was stopped",
    lost: "the attempt stopped heartbeating",
  },
  succeeded: {},
  failed: {},
  cancelled: {},
  timed_out: {},
  lost: {},
};

function transitionReason<S extends string>(table: TransitionTable<S>, from: S, to: S): string | undefined {
  return table[from]?.[to];
}

export function canTransitionRun(from: RunStatus, to: RunStatus): boolean {
  return transitionReason(runTransitions, from, to) !== undefined;
}

export function canTransitionAttempt(from: AttemptStatus, to: AttemptStatus): boolean {
  return transitionReason(attemptTransitions, from, to) !== undefined;
}

function illegal(kind: "run" | "attempt", from: string, to: string, legal: string[]): AppError {
  const options = legal.length > 0 ? `it can only become ${legal.join(", ")}` : `${from} is final`;
  return new AppError("CONFLICT", `Cannot move ${kind} from ${from} to ${to}: ${options}`, {
    reason: "illegal_transition",
    details: { kind, from, to, legal },
  });
}

/** Throws AppError(CONFLICT, reason "illegal_transition") unless from -> to is listed. */
export function assertRunTransition(from: RunStatus, to: RunStatus): void {
  if (!canTransitionRun(from, to)) throw illegal("run", from, to, Object.keys(runTransitions[from]));
}

/** Throws AppError(CONFLICT, reason "illegal_transition") unless from -> to is listed. */
export function assertAttemptTransition(from: AttemptStatus, to: AttemptStatus): void {
  if (!canTransitionAttempt(from, to)) {
    throw illegal("attempt", from, to, Object.keys(attemptTransitions[from]));
  }
}

// ---------------------------------------------------------------- run predicates

const terminalRun = new Set<RunStatus>(["succeeded", "failed", "cancelled", "escalated"]);
const liveRun = new Set<RunStatus>(["queued", "running"]);
const retriableRun = new Set<RunStatus>(["failed", "cancelled", "escalated"]);

/** No work is in progress and none will start by itself (a retry may re-open it). */
export function isTerminalRun(status: RunStatus): boolean {
  return terminalRun.has(status);
}

/** Work is queued or running: the transcript may still grow and heartbeats matter. */
export function isLiveRun(status: RunStatus): boolean {
  return liveRun.has(status);
}

/**
 * The agent's work is not finished: suggested (not started yet), queued or running. Write-backs
 * made from a run's result (a PR, a rerun, a release) wait for it.
 */
export function isUnfinishedRun(status: RunStatus): boolean {
  return status === "suggested" || liveRun.has(status);
}

/**
 * Dispatched and not yet ended: live, or awaiting approval (its write-backs may still push to
 * the branch). The fix loop waits for every open run on a branch before taking up a rejection.
 */
export const openRunStatuses: readonly RunStatus[] = ["queued", "running", "awaiting_approval"];

export function isOpenRun(status: RunStatus): boolean {
  return openRunStatuses.includes(status);
}

/** Every status a run can be cancelled from, read off the transition table. */
export const cancellableRunStatuses: readonly RunStatus[] = runStatuses.filter((s) => canTransitionRun(s, "cancelled"));

const describe = (status: string) => status.replaceAll("_", " ");

export function canCancelRun(status: RunStatus): Verdict {
  if (canTransitionRun(status, "cancelled")) return yes;
  return no(`The run is already ${describe(status)}; there is nothing to cancel`);
}

export type RetryFacts = {
  /** Attempts made so far. */
  attempts?: number;
  /** Retries the stack allows after the first attempt (limits.maxRetries). */
  maxRetries?: number;
};

/** Retry = a new attempt of the same run. */
export function canRetryRun(status: RunStatus, facts: RetryFacts = {}): Verdict {
  if (status === "succeeded") return no("The run succeeded; resume or fork it to continue");
  if (status === "suggested") return no("The suggestion never ran; dispatch it instead");
  // running -> queued is also legal, but only for the automatic retry of a lost attempt.
  if (!retriableRun.has(status)) {
    return no(`The run is ${describe(status)}; retry is for failed, cancelled or escalated runs`);
  }
  const { attempts, maxRetries } = facts;
  if (attempts !== undefined && maxRetries !== undefined && attempts > maxRetries) {
    return no(`All ${attempts} attempts are used (the stack allows ${maxRetries} retries); fork the run instead`);
  }
  return yes;
}

/** Resume = a new run continuing this one's session, with this one as parent. */
export function canResumeRun(status: RunStatus): Verdict {
  if (status === "suggested") return no("The suggestion never ran; dispatch it instead");
  if (!isTerminalRun(status)) return no(`The run is ${describe(status)}; resume it once it has finished`);
  return yes;
}

/** Fork = a new run from this one's context and stack snapshot; the original keeps going. */
export function canForkRun(status: RunStatus): Verdict {
  if (status === "suggested") return no("The suggestion never ran; dispatch it instead");
  return yes;
}

export function canApproveRun(status: RunStatus): Verdict {
  if (status === "awaiting_approval") return yes;
  return no(`The run is ${describe(status)}; only a run awaiting approval has write-backs to approve`);
}

// ---------------------------------------------------------------- attempt predicates

const terminalAttempt = new Set<AttemptStatus>(["succeeded", "failed", "cancelled", "timed_out", "lost"]);

export function isTerminalAttempt(status: AttemptStatus): boolean {
  return terminalAttempt.has(status);
}

/** An attempt that holds (or is about to hold) an agent session and must heartbeat. */
export function isActiveAttempt(status: AttemptStatus): boolean {
  return status === "starting" || status === "running";
}

export function canCancelAttempt(status: AttemptStatus): Verdict {
  if (canTransitionAttempt(status, "cancelled")) return yes;
  return no(`The attempt is already ${describe(status)}`);
}

// ---------------------------------------------------------------- automatic retries

/**
 * How an attempt ended, as far as retrying is concerned. Retried automatically (within the
 * stack's bound): the attempt was lost (its worker died or shut down), hit its wall-clock limit,
 * or its agent could not start for a transient reason (the cluster or the machine was briefly
 * unable: 5xx/429, EAGAIN, EMFILE...). Never retried: the agent itself failed (a non-zero exit
 * is the agent's answer, and would very likely be the same again), it could not start for a
 * lasting reason (command not found, bad stack), admission refused it, or a person cancelled it.
 */
export type AttemptEndCause = "lost" | "timed_out" | "start_failed_transient" | "start_failed" | "agent_failed" | "admission_refused" | "cancelled";

export type RetryVerdict = { retry: true; reason: string } | { retry: false; reason: string };

const retriable: Record<AttemptEndCause, string | null> = {
  lost: null,
  timed_out: null,
  start_failed_transient: null,
  start_failed: "the agent could not start for a reason a retry would not change",
  agent_failed: "the agent itself failed; a retry would very likely fail the same way",
  admission_refused: "admission refused the attempt; only a change of grants, pools or roles can help",
  cancelled: "the attempt was cancelled",
};

/**
 * Whether the run gets a new attempt automatically. Pure. `attempts` counts the run's attempts
 * including the one that just ended, so with maxRetries = 2 the third attempt is the last.
 * Only a run still in flight (queued or running) is retried: a run a person cancelled or that
 * already ended stays as it is.
 */
export function automaticRetry(opts: { cause: AttemptEndCause; runStatus: RunStatus; attempts: number; maxRetries: number }): RetryVerdict {
  const { cause, runStatus, attempts, maxRetries } = opts;
  const refusal = retriable[cause];
  if (refusal) return { retry: false, reason: refusal };
  if (runStatus !== "queued" && runStatus !== "running") return { retry: false, reason: `the run is ${runStatus}` };
  if (attempts > maxRetries) {
    return { retry: false, reason: maxRetries === 0 ? "the stack allows no retries" : `no retry is left (${maxRetries} allowed, all used)` };
  }
  return { retry: true, reason: `retry ${attempts} of ${maxRetries}` };
}
