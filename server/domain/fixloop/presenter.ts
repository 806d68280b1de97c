import type { Db } from "@/server/db";
import { presentedLabelChange } from "../approvals/schemas";
import { AppError } from "@/server/errors";
import { countIntents, deferredRejectionOf } from "./spawn";

// What the rounds view shows for one branch's fix-forward loop: each rejection and the fix run
// it started (or why it did not), the attempts used against the bound, the attribution of each
// red check with its stored decision (the proof is read through proofs.byId), the escalation.

export async function getRunFixLoop(opts: { db: Db; runId: string }) {
  const run = await opts.db.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: { repositoryId: true, headBranch: true, pullRequest: { select: { headRef: true } } } });
  if (!run) throw new AppError("NOT_FOUND", "No such run.");
  const branch = run.pullRequest?.headRef ?? run.headBranch;
  if (!branch) return null;
  const view = await getFixLoop({ db: opts.db, repositoryId: run.repositoryId, branch });
  // A branch with no loop activity and no attribution shows nothing.
  return view.rounds.length === 0 && view.attributions.length === 0 && !view.escalatedAt && !view.deferred ? null : view;
}

export async function getFixLoop(opts: { db: Db; repositoryId: string; branch: string }) {
  const { db, repositoryId, branch } = opts;
  const repo = await db.repository.findUnique({ where: { id: repositoryId }, select: { id: true, fullName: true, maxFixAttempts: true, agentReadyLabel: true, humanReadyLabel: true } });
  if (!repo) throw new AppError("NOT_FOUND", "No such repository.");
  const state = await db.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId, branch } } });
  const intents = await db.fixSpawnIntent.findMany({ where: { repositoryId, branch }, orderBy: { createdAt: "asc" } });
  const runIds = intents.flatMap((i) => [i.runId, i.parentRunId]).filter((id): id is string => id !== null);
  const runs = new Map(
    (await db.agentDispatchRun.findMany({ where: { id: { in: runIds } }, select: { id: true, number: true, status: true, title: true } })).map((r) => [r.id, r]),
  );
  // A rejection waiting for the live run to end (hidden once escalated: it will not be taken up).
  const deferred = state?.escalatedAt ? null : deferredRejectionOf(state);
  const behind = deferred?.behindRunId
    ? await db.agentDispatchRun.findUnique({ where: { id: deferred.behindRunId }, select: { id: true, number: true, status: true } })
    : null;
  const used = await countIntents(db, { repositoryId, branch, kind: "fix", since: state?.resetAt ?? null });
  const pr = state?.pullRequestId ?? intents.find((i) => i.pullRequestId)?.pullRequestId ?? null;
  const pullRequest = pr ? await db.pullRequest.findUnique({ where: { id: pr }, select: { id: true, number: true, title: true, labels: true, url: true } }) : null;
  // The escalation's label flip is a write-back at the change gate: its latest request on the PR.
  const flip = pullRequest
    ? await db.approvalRequest.findFirst({ where: { action: "set_labels", targetPrNumber: pullRequest.number, run: { repositoryId } }, orderBy: { createdAt: "desc" }, select: { id: true, status: true, presented: true } })
    : null;

  // The latest attribution decision per check on this branch's runs.
  const branchRuns = await db.agentDispatchRun.findMany({ where: { repositoryId, OR: [{ headBranch: branch }, ...(pr ? [{ pullRequestId: pr }] : [])] }, select: { id: true } });
  const decisions = await db.policyDecision.findMany({
    where: { runId: { in: branchRuns.map((r) => r.id) }, policyVersion: { policy: { kind: "attribution" } } },
    orderBy: { createdAt: "desc" },
    take: 200,
    select: { id: true, subject: true, value: true, ruleName: true, createdAt: true, runId: true },
  });
  const latest = new Map<string, (typeof decisions)[number]>();
  for (const d of decisions) {
    const check = d.subject.split("|")[1] ?? d.subject;
    if (!latest.has(check)) latest.set(check, d);
  }

  return {
    repository: { id: repo.id, fullName: repo.fullName },
    branch,
    pullRequest,
    bound: repo.maxFixAttempts,
    used,
    labels: { agent: repo.agentReadyLabel, human: repo.humanReadyLabel },
    escalatedAt: state?.escalatedAt ?? null,
    escalationDigest: state?.escalationDigest ?? null,
    labelFlip: flip ? { approvalId: flip.id, status: flip.status, change: presentedLabelChange(flip.presented) } : null,
    resetAt: state?.resetAt ?? null,
    resetBy: state?.resetBy ?? null,
    deferred: deferred ? { by: deferred.by, text: deferred.text, at: deferred.at, behind } : null,
    rounds: intents.map((i) => ({
      id: i.id,
      kind: i.kind,
      createdAt: i.createdAt,
      rejectedBy: i.rejectedBy,
      rejection: i.rejection,
      outcome: i.outcome,
      error: i.error,
      counted: !state?.resetAt || i.createdAt > state.resetAt,
      run: i.runId ? (runs.get(i.runId) ?? null) : null,
      parent: i.parentRunId ? (runs.get(i.parentRunId) ?? null) : null,
    })),
    attributions: [...latest].map(([check, d]) => ({ check, decisionId: d.id, value: String(d.value), rule: d.ruleName, decidedAt: d.createdAt, runId: d.runId })),
  };
}
