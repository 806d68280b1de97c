import { getDb, Prisma } from "@/server/db";
import { logError, logEvent } from "./log";
import { metrics, secondsBetween } from "./metrics";
import { type AppendedEvents, observeApprovalSpan, observeEventSpans } from "./tracing";

// What operators' tools see of the run events: every status, queue, admission, context,
// approval and write-back event is appended through appendRunEvents, which hands the committed
// events here. One place turns them into counters, histograms, log lines and spans, so no use
// case has to remember to.


const TERMINAL_ATTEMPT = new Set(["succeeded", "failed", "cancelled", "timed_out", "lost"]);

export function observeRunEvents(appended: AppendedEvents): void {
  const { runId, attemptId } = appended;
  const ids = { runId, attemptId };
  const m = metrics();
  for (const e of appended.events) {
    try {
      switch (e.type) {
        case "status": {
          const p = e.payload;
          if (p.scope === "run") {
            if (p.to === "queued") m.dispatchesQueued.inc();
            else if (p.to === "failed") m.dispatchesFailed.inc();
            else if (p.to === "cancelled") m.cancellations.inc();
          } else {
            if (p.to === "running") logEvent("adapter.gateway", ids, { call: "start_session", attemptNumber: p.attemptNumber }, `attempt ${p.attemptNumber}: agent session started`);
            if (TERMINAL_ATTEMPT.has(p.to)) {
              logEvent("adapter.gateway", ids, { call: "session_exit", attemptNumber: p.attemptNumber, outcome: p.to, reason: p.reason }, `attempt ${p.attemptNumber}: agent session ended ${p.to}`);
              void attemptFinished(runId, p.attemptNumber, p.to);
            }
          }
          break;
        }
        case "queue":
          if (e.payload.phase === "dequeued") m.queueWait.observe(e.payload.waitMs / 1000);
          logEvent(
            "runner.scheduling",
            ids,
            { phase: e.payload.phase, attemptNumber: e.payload.attemptNumber, pool: e.payload.poolName ?? null, ...(e.payload.phase === "dequeued" ? { waitMs: e.payload.waitMs } : {}) },
            `attempt ${e.payload.attemptNumber} ${e.payload.phase}${e.payload.poolName ? ` on ${e.payload.poolName}` : ""}`,
          );
          break;
        case "admission": {
          const p = e.payload;
          logEvent("runner.scheduling", ids, { decision: "pool", pool: p.poolName, trustTier: p.trustTier, admitted: p.admitted }, `runner pool: ${p.poolName ?? "none"} (${p.trustTier ?? "no tier"})`);
          logEvent(
            "service_account.selection",
            ids,
            { runtimeServiceAccount: p.runtimeServiceAccount, runnerServiceAccount: p.runnerServiceAccount },
            `service accounts: runtime ${p.runtimeServiceAccount ?? "none"}, runner ${p.runnerServiceAccount ?? "none"}`,
          );
          logEvent("rbac.admission", ids, { admitted: p.admitted, policyDecisionId: p.policyDecisionId ?? null, summary: p.summary }, `${p.admitted ? "admitted" : "refused"}: ${p.summary}`, p.admitted ? "info" : "warn");
          // Names only: a grant's value never reaches a log.
          logEvent(
            "grant.decision",
            ids,
            { secretsGranted: p.secretsGranted, secretsDenied: p.secretsDenied, configMapsGranted: p.configMapsGranted },
            `grants: ${p.secretsGranted.length} secret(s) and ${p.configMapsGranted.length} config map(s) granted, ${p.secretsDenied.length} secret(s) denied`,
          );
          break;
        }
        case "context_assembled":
          logEvent(
            "context.redaction",
            ids,
            { source: "bundle", redactions: e.payload.redactions, truncated: e.payload.truncated, digest: e.payload.digest, sizeBytes: e.payload.sizeBytes },
            `context bundle: ${e.payload.redactions} redaction(s)${e.payload.truncated ? ", truncated to its bounds" : ""}`,
          );
          break;
        case "context_attached":
          logEvent("context.redaction", ids, { source: "attachment", attachmentId: e.payload.attachmentId, redactions: e.payload.redactions }, `attached ${e.payload.kind}: ${e.payload.redactions} redaction(s)`);
          break;
        case "trigger_matched":
          logEvent(
            "ci.correlation",
            { ...ids, deliveryId: e.payload.deliveryId ?? null },
            { ruleId: e.payload.ruleId, triggerKind: e.payload.triggerKind, dedupeKey: e.payload.dedupeKey },
            `delivery ${e.payload.deliveryId ?? "(none)"} -> run ${runId} by rule ${e.payload.ruleName}`,
          );
          break;
        case "dispatch_skipped":
          if (e.payload.dedupeKey) void dedupeDropped(e.payload.ruleId ?? null);
          break;
        case "write_back_completed":
          m.writeBacks.inc({ kind: e.payload.action, outcome: e.payload.outcome });
          break;
        case "subagent_started":
          m.subagentsStarted.inc();
          break;
      }
    } catch (err) {
      logError(`observe ${e.type} event`, err, ids);
    }
  }
  observeEventSpans(appended);
}

async function dedupeDropped(ruleId: string | null) {
  try {
    const rule = ruleId ? await getDb().triggerRule.findUnique({ where: { id: ruleId }, select: { kind: true } }) : null;
    metrics().dedupeDrops.inc({ trigger_kind: rule?.kind ?? "unknown" });
  } catch (err) {
    logError("count dedupe drop", err);
  }
}

type FinishedAttempt = { startedAt: Date | null; finishedAt: Date | null; inputTokens: number; outputTokens: number; costUsd: string; pool: string | null; model: string | null };

/** A finished attempt's duration, tokens and cost, read once from its row (the totals are final there). */
async function attemptFinished(runId: string, attemptNumber: number, outcome: string) {
  try {
    const [a] = await getDb().$queryRaw<FinishedAttempt[]>(Prisma.sql`
      SELECT a."startedAt", a."finishedAt", a."inputTokens", a."outputTokens", a."costUsd"::text AS "costUsd",
        p."name" AS "pool", r."stackSnapshot"->'spec'->>'model' AS "model"
      FROM "DispatchAttempt" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" LEFT JOIN "RunnerPool" p ON p."id" = a."runnerPoolId"
      WHERE a."runId" = ${runId} AND a."number" = ${attemptNumber}`);
    if (!a) return;
    const m = metrics();
    if (a.startedAt) m.attemptDuration.observe({ outcome, pool: a.pool ?? "none" }, secondsBetween(a.startedAt, a.finishedAt ?? new Date()));
    const model = a.model ?? "unknown";
    if (a.inputTokens > 0) m.modelTokens.inc({ model, direction: "input" }, a.inputTokens);
    if (a.outputTokens > 0) m.modelTokens.inc({ model, direction: "output" }, a.outputTokens);
    const usd = Number(a.costUsd);
    if (usd > 0) m.modelCost.inc({ model }, usd);
  } catch (err) {
    logError("observe finished attempt", err, { runId });
  }
}

const APPROVAL_OUTCOMES: Record<string, string> = { "approval.approve": "approved", "approval.reject": "rejected", "approval.expire": "expired", "approval.stale": "stale" };

/** Approval decisions are audited (a person's change): the audit row is where they all pass. */
export function observeAudit(entry: { action: string; objectType: string; objectId: string }): void {
  const outcome = APPROVAL_OUTCOMES[entry.action];
  if (!outcome || entry.objectType !== "ApprovalRequest") return;
  metrics().approvals.inc({ outcome });
  void (async () => {
    try {
      const a = await getDb().approvalRequest.findUnique({
        where: { id: entry.objectId },
        select: { createdAt: true, decidedAt: true, runId: true, action: true, run: { select: { traceParent: true } } },
      });
      if (!a) return;
      const decidedAt = a.decidedAt ?? new Date();
      metrics().approvalWait.observe({ outcome }, secondsBetween(a.createdAt, decidedAt));
      observeApprovalSpan({ approvalId: entry.objectId, runId: a.runId, action: a.action, outcome, createdAt: a.createdAt, decidedAt, traceParent: a.run.traceParent });
    } catch (err) {
      logError("observe approval decision", err);
    }
  })();
}
