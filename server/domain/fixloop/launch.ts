import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { systemActor } from "../actor";
import { appendRunEvents } from "../events/append";
import { createChildRun, parentSelect, type ParentRun } from "../runs/child-run";
import { ATTRIBUTION_HEADING, attributionLines } from "../context/prompt-variables";
import { currentAttributions } from "./attribution-decisions";
import { errorText } from "./escalate";
import { countIntents, fixLoopLockKey, onRejection } from "./spawn";
import { advisoryLock } from "@/server/db/advisory-lock";

// "fixloop.launch": turns a pending fix intent into a fix run, once. The fix run is a fresh run
// (never a resumed session) on the existing branch, child of the authoring run, with its stack
// snapshot and model, and a prompt that carries the task, the pull request and the rejection
// verbatim. Its patch goes through the approval gate to the same branch like any patch (the
// write-back is update_pr_branch / push_commits, never open_pr).
//
// A launch that fails marks the intent failed: the attempt is burned, and the next intent (or
// the escalation at the bound) is written, so a deterministically failing launch ends.

export type LaunchResult =
  | { kind: "launched"; runId: string; number: number }
  | { kind: "failed"; error: string; next: string }
  | { kind: "skipped"; reason: string };

const fixActor = systemActor("airlock fix-forward");

export function fixPrompt(opts: {
  parent: ParentRun;
  branch: string;
  pullRequest: { number: number; title: string; url: string | null } | null;
  rejection: { text: string; by: string };
  attempt: number;
  bound: number;
  attributions: { check: string; attribution: string; guidance: string }[];
}): string {
  const pr = opts.pullRequest;

  return [
    `This is fix run ${opts.attempt} of ${opts.bound} on branch ${opts.branch}: your earlier change was rejected.`,
    "Push your fix to the same branch through Airlock's approval gate. Do not open a new pull request.",
    "",
    "## The task (from the run that authored the branch)",
    opts.parent.prompt,
    "",
    "## The pull request",
    pr ? `#${pr.number} ${pr.title}${pr.url ? ` (${pr.url})` : ""}` : `No pull request: the work is on branch ${opts.branch}.`,
    "",
    `## The rejection, verbatim (by ${opts.rejection.by})`,
    opts.rejection.text,
    ...(opts.attributions.length > 0 ? ["", ATTRIBUTION_HEADING, attributionLines(opts.attributions)] : []),
  ].join("\n");
}

export type LaunchHooks = {
  /** Test hook: runs inside the launch transaction before the run is created (throw to fail). */
  beforeCreate?: () => Promise<void> | void;
};

export async function launchFixRun(opts: { db: Db; intentId: string; now?: Date; hooks?: LaunchHooks }): Promise<LaunchResult> {
  const now = opts.now ?? new Date();
  try {
    return await transaction(opts.db, "launchFixRun", async (tx) => {
      const intent = await lockIntent(tx, opts.intentId);
      if (!intent) return { kind: "skipped", reason: "no such intent" } as const;
      if (intent.outcome !== "pending" || intent.kind !== "fix") return { kind: "skipped", reason: `the intent is ${intent.outcome}` } as const;
      if (!intent.parentRunId) throw new Error("the intent names no authoring run");
      const parent = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: intent.parentRunId }, select: parentSelect });
      const pr = intent.pullRequestId
        ? await tx.pullRequest.findUnique({ where: { id: intent.pullRequestId }, select: { number: true, title: true, url: true, headSha: true } })
        : null;
      const state = await tx.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: intent.repositoryId, branch: intent.branch } } });
      const attempt = await countIntents(tx, { repositoryId: intent.repositoryId, branch: intent.branch, kind: "fix", since: state?.resetAt ?? null });
      const repo = await tx.repository.findUniqueOrThrow({ where: { id: intent.repositoryId }, select: { maxFixAttempts: true } });
      await opts.hooks?.beforeCreate?.();
      const attributions = await currentAttributions(tx, { repositoryId: intent.repositoryId, branch: intent.branch });
      const prompt = fixPrompt({ parent, branch: intent.branch, pullRequest: pr, rejection: { text: intent.rejection, by: intent.rejectedBy }, attempt, bound: repo.maxFixAttempts, attributions });
      // The rejection is the fix run's instructions: an Airlock user who wrote it caused its work.
      const rejecter = await tx.user.findUnique({ where: { email: intent.rejectedBy }, select: { id: true } });
      const run = await createChildRun(tx, {
        parent,
        source: "review",
        actor: fixActor,
        cause: "started",
        causers: rejecter ? [{ userId: rejecter.id, cause: "rejected" }] : [],
        prompt,
        title: `Fix ${attempt}/${repo.maxFixAttempts} after rejection: ${parent.title}`,
        headSha: pr?.headSha ?? parent.headSha,
        // The fix run carries on the authoring run's rule: the authority admission checks.
        triggerRuleId: parent.triggerRuleId,
        bundleExtras: {
          fixForward: { attempt, bound: repo.maxFixAttempts, branch: intent.branch, rejection: { by: intent.rejectedBy, text: intent.rejection } },
          attribution: attributions,
        },
        reason: `${intent.rejectedBy} rejected run #${parent.number}'s work; fix run ${attempt} of ${repo.maxFixAttempts}`,
        now,
      });
      await tx.fixSpawnIntent.update({ where: { id: intent.id }, data: { outcome: "launched", runId: run.id } });
      await appendRunEvents({
        db: tx,
        runId: parent.id,
        events: [{ type: "log", payload: { stream: "system", text: `fix run #${run.number} started after ${intent.rejectedBy}'s rejection` } }],
      });
      return { kind: "launched", runId: run.id, number: run.number } as const;
    });
  } catch (err) {
    const error = errorText(err);
    return failLaunch(opts.db, opts.intentId, error, now);
  }
}

async function lockIntent(tx: Tx, intentId: string) {
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "FixSpawnIntent" WHERE "id" = ${intentId} FOR UPDATE`;
  return row ? tx.fixSpawnIntent.findUnique({ where: { id: intentId } }) : null;
}

/** The failed launch burns its attempt; the loop moves on (next intent, or escalation at the bound). */
async function failLaunch(db: Db, intentId: string, error: string, now: Date): Promise<LaunchResult> {
  return transaction(db, "failFixLaunch", async (tx) => {
    const intent = await lockIntent(tx, intentId);
    if (!intent || intent.outcome !== "pending") return { kind: "skipped", reason: "the intent was settled meanwhile" } as const;
    await tx.fixSpawnIntent.update({ where: { id: intent.id }, data: { outcome: "failed", error } });
    await advisoryLock(tx, fixLoopLockKey(intent.repositoryId, intent.branch));
    const next = await onRejection(
      tx,
      {
        repositoryId: intent.repositoryId,
        branch: intent.branch,
        pullRequestId: intent.pullRequestId,
        rejectedRunId: intent.parentRunId,
        text: intent.rejection,
        by: intent.rejectedBy,
        // The same rejection, one more try: its own key, so it is counted and never doubled.
        key: `${intent.dedupeKey.replace(/^fix:/, "")}~relaunch`,
      },
      now,
    );
    return { kind: "failed", error, next: next.kind } as const;
  });
}

