import type { RepoRole, RunStatus } from "@/server/db/generated/enums";
import { canApproveRun, canCancelRun, canForkRun, canResumeRun, canRetryRun, type Verdict } from "./lifecycle";

// Which run controls a viewer may use right now, and why not. The page renders
// these verdicts as they are: it never decides on its own.

export const runControlNames = ["cancel", "retry", "resume", "fork", "approve", "reject", "continue", "attachContext", "dispatch"] as const;
export type RunControlName = (typeof runControlNames)[number];

export type RunControl = {
  enabled: boolean;
  /** Why it is disabled (null when enabled). */
  reason: string | null;
  /** The state or role reason as well, when the control is not built yet. */
  detail: string | null;
};

/**
 * Controls whose mutation exists today (runs.cancel/dispatch/retry/resume/fork,
 * approvals.approve/reject; a continuation is runs.resume with instructions).
 * Adding one here is how a control is switched on.
 */
export const implementedControls: ReadonlySet<RunControlName> = new Set<RunControlName>([
  "cancel",
  "approve",
  "reject",
  "retry",
  "resume",
  "fork",
  "dispatch",
  "continue",
  "attachContext",
]);

export const notAvailableYet = "Not available yet";

const rank: Record<RepoRole, number> = { viewer: 1, maintainer: 2, admin: 3 };

/** Attaching context to a session in flight: meaningful while it runs or waits for approval. */
export function canAttachContext(status: RunStatus): Verdict {
  return status === "running" || status === "awaiting_approval"
    ? { ok: true }
    : { ok: false, reason: `The run is ${status.replaceAll("_", " ")}; context is attached to a running run or one awaiting approval` };
}

export type RunControlFacts = {
  status: RunStatus;
  role: RepoRole;
  attempts: number;
  maxRetries?: number;
  pendingApprovals: number;
  /** Why this viewer may not approve the run's write-backs (the two-person rule), if so. */
  approveRefusal?: string | null;
  implemented?: ReadonlySet<RunControlName>;
};

export function runControls(facts: RunControlFacts): Record<RunControlName, RunControl> {
  const implemented = facts.implemented ?? implementedControls;
  const roleVerdict = (min: RepoRole): Verdict =>
    rank[facts.role] >= rank[min] ? { ok: true } : { ok: false, reason: `This needs the ${min} role on the repository; you are ${facts.role}` };
  const pending: Verdict = facts.pendingApprovals > 0 ? { ok: true } : { ok: false, reason: "No approval is pending" };
  const suggestion: Verdict = facts.status === "suggested" ? { ok: true } : { ok: false, reason: "Only a suggestion can be dispatched" };
  const decide = all(canApproveRun(facts.status), pending);
  const approve = facts.approveRefusal ? all(decide, { ok: false, reason: facts.approveRefusal }) : decide;

  const verdicts: Record<RunControlName, Verdict> = {
    cancel: canCancelRun(facts.status),
    retry: canRetryRun(facts.status, { attempts: facts.attempts, maxRetries: facts.maxRetries }),
    resume: canResumeRun(facts.status),
    fork: canForkRun(facts.status),
    approve,
    reject: decide,
    // A continuation prompt starts a resume run (this run as parent) with the prompt as instructions.
    continue: canResumeRun(facts.status),
    attachContext: canAttachContext(facts.status),
    dispatch: suggestion,
  };

  const out = {} as Record<RunControlName, RunControl>;
  for (const name of runControlNames) {
    const verdict = all(verdicts[name], roleVerdict("maintainer"));
    if (!implemented.has(name)) {
      out[name] = { enabled: false, reason: notAvailableYet, detail: verdict.ok ? null : verdict.reason };
    } else {
      out[name] = verdict.ok ? { enabled: true, reason: null, detail: null } : { enabled: false, reason: verdict.reason, detail: null };
    }
  }
  return out;
}

function all(...verdicts: Verdict[]): Verdict {
  return verdicts.find((v) => !v.ok) ?? { ok: true };
}
