import type { PrismaClient } from "@/server/db";
import { transaction } from "@/server/db";
import { attributeRedCheck } from "@/server/domain/fixloop/attribution-decisions";
import { escalateFixLoop } from "@/server/domain/fixloop/escalate";
import { fixForwardOnApprovalRejection } from "@/server/domain/fixloop/triggers";
import { notify } from "@/server/domain/notifications/notify";
import { REPO } from "./repos";
import { must } from "./util";

// The parts of the demo's story that are records of the fix-forward loop and of red-check
// attribution (seeds 003 and 004), made by the loop's and attribution's own code over the
// seeded runs rather than written as rows, so what the console shows is what that code does:
//
// - PR #236 on acme/web-console (bound 2): a repair and two fix runs, each patch rejected by
//   Alex. The first two rejections are the loop's spawn intents (their fix runs are seeded); the
//   third goes through the approval-rejection hook, which intends the escalation at the bound,
//   and escalateFixLoop asks the change gate for the digest comment and the label flip (both
//   wait for a person there) and records the notification.
// - PR #231 on acme/web-console: the agent passes' CI observations, and the attribution of the
//   two checks red at the force-pushed head: lint pre-existing, e2e ours.
//
// Idempotent: each part is skipped when its record exists.

const FIX_BRANCH = "renovate/node-22.x";
const ATTRIBUTION_BRANCH = "settings-rsc";

type Refs = { now: Date };

async function runByTitle(db: PrismaClient, repositoryId: string, title: string) {
  return must(
    await db.agentDispatchRun.findFirst({
      where: { repositoryId, title },
      select: { id: true, number: true, headSha: true, headBranch: true, pullRequestId: true, repositoryId: true, createdAt: true, attempts: { select: { id: true }, orderBy: { number: "asc" } } },
    }),
    `seeded run "${title}"`,
  );
}

async function rejectedPatch(db: PrismaClient, runId: string) {
  return must(
    await db.approvalRequest.findFirst({
      where: { runId, action: "push_commits", status: "rejected" },
      select: { id: true, action: true, targetBranch: true, reason: true, decidedAt: true, decidedBy: { select: { email: true } } },
    }),
    `the rejected patch of run ${runId}`,
  );
}

/** The fix-forward loop of PR #236, escalated at its bound. */
async function seedFixLoopEscalation(db: PrismaClient) {
  const repo = must(await db.repository.findUnique({ where: { fullName: REPO.console }, select: { id: true } }), REPO.console);
  const state = await db.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: repo.id, branch: FIX_BRANCH } }, select: { escalatedAt: true } });
  if (state?.escalatedAt) return;

  const repair = await runByTitle(db, repo.id, "Repair build-image on PR #236 (node 22 base image)");
  const fix1 = await runByTitle(db, repo.id, "Fix 1/2 after rejection: Repair build-image on PR #236 (node 22 base image)");
  const fix2 = await runByTitle(db, repo.id, "Fix 2/2 after rejection: Repair build-image on PR #236 (node 22 base image)");
  const rounds = [
    { rejected: repair, fix: fix1, approval: await rejectedPatch(db, repair.id) },
    { rejected: fix1, fix: fix2, approval: await rejectedPatch(db, fix1.id) },
  ];
  const last = await rejectedPatch(db, fix2.id);
  const at = must(last.decidedAt, "the last rejection's time");

  const intentId = await transaction(db, "seedFixLoopEscalation", async (tx) => {
    // The loop's record of the two fix runs it started, as onRejection + launchFixRun wrote them.
    for (const r of rounds) {
      await tx.fixSpawnIntent.upsert({
        where: { dedupeKey: `fix:approval:${r.approval.id}` },
        create: {
          repositoryId: repo.id,
          branch: FIX_BRANCH,
          kind: "fix",
          pullRequestId: r.rejected.pullRequestId,
          dedupeKey: `fix:approval:${r.approval.id}`,
          rejection: must(r.approval.reason, "rejection reason"),
          rejectedBy: must(r.approval.decidedBy?.email, "rejecter"),
          parentRunId: r.rejected.id,
          runId: r.fix.id,
          outcome: "launched",
          createdAt: must(r.approval.decidedAt, "rejection time"),
        },
        update: {},
      });
    }
    // The third rejection, through the hook the approval screen calls: the bound is reached.
    const outcome = await fixForwardOnApprovalRejection(tx, {
      approval: { id: last.id, action: last.action, targetBranch: last.targetBranch, run: { id: fix2.id, repositoryId: repo.id, pullRequestId: fix2.pullRequestId, headBranch: fix2.headBranch } },
      reason: must(last.reason, "rejection reason"),
      by: must(last.decidedBy?.email, "rejecter"),
      now: at,
    });
    if (outcome.kind !== "escalation_intended" && outcome.kind !== "duplicate") throw new Error(`the PR #236 fix loop did not reach its bound: ${JSON.stringify(outcome)}`);
    return outcome.intentId;
  });
  // What the worker's fixloop.escalate job does (the job it enqueued then finds nothing to do).
  const result = await escalateFixLoop({ db, intentId, now: new Date(at.getTime() + 20_000), notify: (tx, input) => notify(tx, input, { webhook: null }) });
  if (result.kind === "failed") throw new Error(`escalating the PR #236 fix loop failed: ${result.error}`);
}

/** One CI observation of an agent pass, unless the pass has one. */
async function observe(db: PrismaClient, o: { repositoryId: string; branch: string; pullRequestId: string | null; runId: string; attemptId: string; headSha: string; checks: { name: string; conclusion: "success" | "failure" }[]; leftEdits: boolean; at: Date }) {
  await db.ciObservation.upsert({
    where: { attemptId: o.attemptId },
    create: { repositoryId: o.repositoryId, branch: o.branch, pullRequestId: o.pullRequestId, runId: o.runId, attemptId: o.attemptId, headSha: o.headSha, checks: o.checks, leftEdits: o.leftEdits, observedAt: o.at },
    update: {},
  });
}

async function attributed(db: PrismaClient, subjectStart: string) {
  return (await db.policyDecision.count({ where: { subject: { startsWith: subjectStart }, policyVersion: { policy: { kind: "attribution" } } } })) > 0;
}

/** Red-check attribution of each kind, on PR #231. */
async function seedAttributions(db: PrismaClient) {
  const repo = must(await db.repository.findUnique({ where: { fullName: REPO.console }, select: { id: true } }), REPO.console);

  // PR #231: both agent passes started from the first head, where lint was already red and e2e
  // green (the second left a patch, never pushed: its approval failed when the head moved). At
  // the force-pushed head both are red: lint was red before our edits (pre-existing); e2e went
  // red after a pass that left edits (ours: our edits are in range, an upper bound by design).
  if (!(await attributed(db, `red_check|CI / lint|${repo.id}:${ATTRIBUTION_BRANCH}@`))) {
    const diagnose = await runByTitle(db, repo.id, "Diagnose lint failure on PR #231");
    const fix = await runByTitle(db, repo.id, "Fix failing lint on PR #231");
    const resumed = await runByTitle(db, repo.id, "Fix failing lint on PR #231 (new head)");
    const checks = [
      { name: "CI / lint", conclusion: "failure" as const },
      { name: "CI / e2e", conclusion: "success" as const },
    ];
    for (const [run, leftEdits] of [[diagnose, false], [fix, true]] as const) {
      await observe(db, { repositoryId: repo.id, branch: ATTRIBUTION_BRANCH, pullRequestId: run.pullRequestId, runId: run.id, attemptId: must(run.attempts[0], "attempt").id, headSha: run.headSha, checks, leftEdits, at: run.createdAt });
    }
    await transaction(db, "seedAttribution231", async (tx) => {
      for (const check of ["CI / lint", "CI / e2e"]) {
        await attributeRedCheck(tx, { repositoryId: repo.id, branch: ATTRIBUTION_BRANCH, check, headSha: resumed.headSha, now: resumed.createdAt, runIds: [resumed.id] });
      }
    });
  }
}

export async function seedStory(db: PrismaClient, _refs: Refs): Promise<void> {
  await seedFixLoopEscalation(db);
  await seedAttributions(db);
}
