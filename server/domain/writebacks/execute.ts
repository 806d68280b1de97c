import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import { AppError } from "@/server/errors";
import { type Forge, ForgeError, type ForgeWriteBackRequest, type ForgeWriteBackResult, type WriteBackTarget } from "@/server/forges/types";
import { enqueue } from "@/server/queue/enqueue";
import { type AuditActor, recordAudit } from "../audit";
import { zLabelChange, zPresentedOpenPr, zReviewEvent } from "../approvals/schemas";
import { pinRerunAttempt, recordRerun, rerunRequestOf } from "./rerun";
import { patchToPush } from "../approvals/push-protection";
import { enqueueSettle, transitionApproval } from "../approvals/transition";
import { askForReviewAgainAfterPush } from "../fixloop/review-again";
import { appendRunEvents } from "../events/append";
import { notifyWriteBackFailed } from "./notify-failure";
import { releaseToPublish } from "./publish-release";
import { rollBackRequestOf } from "./roll-back";

// Executes a write-back at most once. The WriteBack row (outcome pending, idempotency key) exists
// before the forge is called: it is written when the approval is given (or when the gate exempts
// the write-back). Here: an outcome already recorded -> nothing to do; an object the forge already
// holds for this key (the worker died after the forge call, before the record) -> recorded, not
// redone; else the forge call, then the record. A forge refusal is recorded as failed with the
// forge's own error (and its people notified), and a maintainer may retry it.
// A label change (set_labels) needs no lookup: the forge's setLabels is idempotent (adding a
// present label or removing an absent one is done), so a retry simply asks again; the labels the
// forge answers with are stored on Airlock's copy of the PR with the record.

export type ExecuteResult = { writeBackId: string; outcome: "succeeded" | "failed" | "already_recorded"; externalRef: string | null; reconciled: boolean };

export type ExecuteOptions = {
  db: Db;
  forgeFor: (repository: { fullName: string; forge: string }) => Forge;
  approvalId?: string;
  writeBackId?: string;
  now?: () => Date;
  /** Test hook: runs after the forge call and before the record (a crash is simulated by throwing). */
  afterForgeCall?: (result: ForgeWriteBackResult) => Promise<void> | void;
};

async function loadWriteBack(db: Db, opts: { approvalId?: string; writeBackId?: string }) {
  const where = opts.writeBackId ? { id: opts.writeBackId } : { approvalId: opts.approvalId };
  return db.writeBack.findFirst({
    where,
    include: {
      run: { select: { id: true, repositoryId: true, pullRequestId: true, repository: { select: { fullName: true, forge: true, checkCommand: true } } } },
    },
  });
}

function requestOf(wb: NonNullable<Awaited<ReturnType<typeof loadWriteBack>>>, patch: string | undefined): ForgeWriteBackRequest {
  const t = (wb.target ?? {}) as { repository?: string; branch?: string | null; prNumber?: number | null; check?: string | null; headSha?: string | null; message?: string | null; review?: { event?: unknown } | null };
  const target: WriteBackTarget = {
    repository: t.repository ?? wb.run.repository.fullName,
    ...(t.branch ? { branch: t.branch } : {}),
    ...(t.prNumber ? { prNumber: t.prNumber } : {}),
    ...(t.check ? { check: t.check } : {}),
    ...(t.headSha ? { headSha: t.headSha } : {}),
  };
  const defaultMessage = wb.kind === "push_commits" || wb.kind === "update_pr_branch" || wb.kind === "open_pr" || wb.kind === "roll_back" ? `Apply the agent's patch from run ${wb.runId}` : `Airlock run ${wb.runId}`;
  const openPr = zPresentedOpenPr.safeParse((wb.target as { openPr?: unknown } | null)?.openPr);
  const reviewEvent = zReviewEvent.safeParse(t.review?.event);
  return {
    kind: wb.kind,
    idempotencyKey: wb.idempotencyKey,
    runId: wb.runId,
    approvalId: wb.approvalId,
    target,
    ...(patch ? { patch } : {}),
    message: t.message ?? defaultMessage,
    ...(reviewEvent.success ? { reviewEvent: reviewEvent.data } : {}),
    ...rerunRequestOf(wb),
    ...(wb.kind === "open_pr" && openPr.success ? { openPr: { base: openPr.data.base, title: openPr.data.title, body: openPr.data.body } } : {}),
    ...(wb.kind === "roll_back" ? { rollBack: rollBackRequestOf(wb.target) ?? undefined } : {}),
  };
}

/** The set_labels write-back on its forge: the PR's labels afterwards, as the forge reports them. */
async function setLabels(forge: Forge, wb: { target: unknown }, req: ForgeWriteBackRequest): Promise<{ result: ForgeWriteBackResult; labels: string[]; prNumber: number }> {
  const change = zLabelChange.safeParse((wb.target as { labels?: unknown } | null)?.labels);
  if (!change.success) throw new ForgeError("this label write-back carries no valid label change", "forge_error");
  const prNumber = req.target.prNumber;
  if (!prNumber) throw new ForgeError("a label change needs a pull request", "forge_error");
  const { labels } = await forge.setLabels(req.target.repository, prNumber, change.data);
  const shown = labels.join(", ").slice(0, 400) || "no labels";
  return { result: { externalRef: `#${prNumber}: ${shown}`, detail: `#${prNumber} now has ${shown}` }, labels, prNumber };
}

export async function executeWriteBack(opts: ExecuteOptions): Promise<ExecuteResult> {
  const now = opts.now ?? (() => new Date());
  const wb = await loadWriteBack(opts.db, opts);
  if (!wb) throw new AppError("NOT_FOUND", "No write-back for this approval.", { reason: "no_write_back" });
  if (wb.outcome !== "pending") return { writeBackId: wb.id, outcome: "already_recorded", externalRef: wb.externalRef, reconciled: false };
  // The artifact is found by the digest the approval bound, so a changed artifact is never pushed;
  // a patch with secrets is pushed only after an admin's override (push-protection.ts).
  const artifact = wb.artifactDigest
    ? await opts.db.artifact.findFirst({ where: { runId: wb.runId, digest: wb.artifactDigest }, select: { kind: true, content: true, digest: true, secretFindings: true, withheldContent: true } })
    : null;
  const override = artifact && wb.approvalId ? (await opts.db.approvalRequest.findUnique({ where: { id: wb.approvalId }, select: { pushProtectionOverride: true } }))?.pushProtectionOverride : null;
  const push = artifact ? patchToPush(artifact, override) : ({ ok: true, patch: undefined } as const);
  // A release publishes the approved artifact's bytes, read again here: a changed one is stale.
  const release = wb.kind === "publish_release" ? await releaseToPublish(opts.db, wb) : null;
  let req = { ...requestOf(wb, push.ok ? push.patch : undefined), ...(release?.ok ? { release: release.release } : {}) };
  let result: ForgeWriteBackResult | null = null;
  let failure: string | null = !push.ok ? push.reason : release && !release.ok ? release.reason : null;
  let reconciled = false;
  let prLabels: { prNumber: number; labels: string[] } | null = null;
  if (failure === null) {
    try {
      const forge = opts.forgeFor(wb.run.repository);
      if (wb.kind === "set_labels") {
        const done = await setLabels(forge, wb, req);
        prLabels = { prNumber: done.prNumber, labels: done.labels };
        result = done.result;
        await opts.afterForgeCall?.(result);
      } else {
        // A GitHub rerun's attempt is pinned on the row first: a later attempt is then this rerun.
        if (wb.kind === "rerun_workflow") req = await pinRerunAttempt({ db: opts.db, forge, wb, req });
        result = await forge.findWriteBack(req);
        reconciled = result !== null;
      }
      if (!result) {
        try {
          result = await forge.executeWriteBack(req);
        } catch (err) {
          if (!(err instanceof ForgeError)) throw err;
          // A racing execution of the same write-back may have moved the branch: look once more.
          result = err.reason === "head_moved" ? await forge.findWriteBack(req) : null;
          reconciled = result !== null;
          if (!result) throw err;
        }
        await opts.afterForgeCall?.(result);
      }
    } catch (err) {
      if (!(err instanceof ForgeError)) throw err;
      failure = err.message;
    }
  }
  const outcome = result ? "succeeded" : "failed";
  const completedAt = now();
  const recorded = await transaction(opts.db, "recordWriteBack", async (tx) => {
    // Guarded: only a pending row is recorded, so a racing duplicate records nothing.
    const updated = await tx.writeBack.updateMany({
      where: { id: wb.id, outcome: "pending" },
      data: { outcome, externalRef: result?.externalRef ?? null, error: failure, completedAt },
    });
    if (updated.count === 0) return false;
    if (failure !== null) {
      const repository = { repositoryId: wb.run.repositoryId, repository: wb.run.repository.fullName, pullRequestId: wb.run.pullRequestId };
      await notifyWriteBackFailed(tx, { id: wb.id, runId: wb.runId, kind: wb.kind, approvalId: wb.approvalId, ...repository }, failure, completedAt);
    }
    // The approval follows its write-back (approval.decided settles the run); one without an
    // approval (a repository exception) asks for the settling itself.
    const followed = wb.approvalId ? await transitionApproval(tx, { approval: { id: wb.approvalId, runId: wb.runId, status: "approved" }, to: result ? "executed" : "failed" }) : false;
    if (!followed) await enqueueSettle(tx, { runId: wb.runId });
    // The forge's answer is the truth (a person may have labelled the PR meanwhile).
    if (prLabels) await tx.pullRequest.updateMany({ where: { repositoryId: wb.run.repositoryId, number: prLabels.prNumber }, data: { labels: prLabels.labels } });
    await appendRunEvents({
      db: tx,
      runId: wb.runId,
      events: [
        {
          type: "write_back_completed",
          payload: { writeBackId: wb.id, ...(wb.approvalId ? { approvalId: wb.approvalId } : {}), action: wb.kind, outcome, ...(result ? { externalRef: result.externalRef } : {}), ...(failure ? { error: failure.slice(0, 4000) } : {}) },
        },
      ],
    });
    // A commit pushed on the local forge reruns its check, linked to the run.
    if (result && wb.run.repository.forge === "local" && wb.run.repository.checkCommand && (wb.kind === "push_commits" || wb.kind === "update_pr_branch" || (wb.kind === "roll_back" && req.rollBack?.mode === "revert")) && req.target.branch) {
      await enqueue(tx, "ci.run", { repositoryId: wb.run.repositoryId, sha: result.externalRef, branch: req.target.branch, triggeredByRunId: wb.runId }, { jobKey: `rerun:${wb.id}` });
    }
    // A rerun's new Pipeline, linked to the run, and its check_rerun once the result is in.
    if (result && wb.kind === "rerun_workflow") await recordRerun(tx, { wb, forge: wb.run.repository.forge, result, now: completedAt });
    // A fix run's pushed patch asks for review again: the fix-forward loop's next round.
    if (result) await askForReviewAgainAfterPush(tx, { runId: wb.runId, writeBackId: wb.id, kind: wb.kind });
    return true;
  });
  if (!recorded) return { writeBackId: wb.id, outcome: "already_recorded", externalRef: result?.externalRef ?? null, reconciled };
  return { writeBackId: wb.id, outcome, externalRef: result?.externalRef ?? null, reconciled };
}

/**
 * A label change is superseded by any later one on the same PR: retrying an escalation's failed
 * flip after a maintainer re-opened the PR for agents would hand it back to a person.
 */
async function refuseSupersededLabelChange(tx: Tx, wb: { id: string; kind: string; target: unknown; createdAt: Date; repositoryId: string }) {
  const prNumber = (wb.target as { prNumber?: unknown } | null)?.prNumber;
  if (wb.kind !== "set_labels" || typeof prNumber !== "number") return;
  const later = await tx.writeBack.findFirst({
    where: { kind: "set_labels", id: { not: wb.id }, createdAt: { gt: wb.createdAt }, run: { repositoryId: wb.repositoryId }, target: { path: ["prNumber"], equals: prNumber } },
    select: { id: true },
  });
  if (later) throw new AppError("CONFLICT", `A later label change on #${prNumber} supersedes this one; it is not retried.`, { reason: "superseded" });
}

/** A failed write-back is tried again by a maintainer (same row, same idempotency key). */
export async function retryWriteBack(opts: { db: Db; actor: AuditActor; writeBackId: string; role: "viewer" | "maintainer" | "admin"; now?: Date }) {
  if (opts.role === "viewer") throw new AppError("FORBIDDEN", "Retrying a write-back needs the maintainer role.", { reason: "repository_role" });
  return transaction(opts.db, "retryWriteBack", async (tx) => {
    const locked = await tx.$queryRaw<{ outcome: string; runId: string; approvalId: string | null; kind: string; target: unknown; createdAt: Date }[]>`
      SELECT "outcome", "runId", "approvalId", "kind", "target", "createdAt" FROM "WriteBack" WHERE "id" = ${opts.writeBackId} FOR UPDATE`;
    const wb = locked[0];
    if (!wb) throw new AppError("NOT_FOUND", "No such write-back.");
    if (wb.outcome !== "failed") throw new AppError("CONFLICT", `The write-back ${wb.outcome === "pending" ? "is still running" : "already succeeded"}.`, { reason: "not_failed" });
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: wb.runId }, select: { repositoryId: true } });
    await refuseSupersededLabelChange(tx, { id: opts.writeBackId, ...wb, repositoryId: run.repositoryId });
    await tx.writeBack.update({ where: { id: opts.writeBackId }, data: { outcome: "pending", error: null, completedAt: null } });
    if (wb.approvalId) await transitionApproval(tx, { approval: { id: wb.approvalId, runId: wb.runId, status: "failed" }, to: "approved" });
    await recordAudit(tx, { actor: opts.actor, action: "writeback.retry", objectType: "WriteBack", objectId: opts.writeBackId, repositoryId: run.repositoryId, detail: { runId: wb.runId } });
    await enqueue(tx, "writeback.execute", { writeBackId: opts.writeBackId }, { jobKey: `writeback-retry:${opts.writeBackId}:${Date.now()}` });
    return { writeBackId: opts.writeBackId };
  });
}
