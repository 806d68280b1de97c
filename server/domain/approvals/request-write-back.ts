import { randomUUID } from "node:crypto";
import type { Db, Prisma, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { systemActor } from "../actor";
import { appendRunEvents } from "../events/append";
import { stackSpecOf } from "../runs/admit-attempt";
import { ranWithOf } from "../runs/attempt-launch";
import { enqueue } from "@/server/queue/enqueue";
import { buildPresented, type PresentedExtra, writeBackExtraOf, type WriteBackTargetInput } from "./presented";
import { changeGateVerdict } from "./change-gate-verdict";
import { pushProtectionOf } from "./push-protection";
import { untrustedOriginKinds } from "../policy/shipped/change-gate";
import { type LabelChange, zLabelChange } from "./schemas";

// The one way a write-back is asked for. The change gate (decide(), policy change_gate) is asked
// with the repository's exceptions and bot-comment setting; refused facts fail closed (approval
// required). Approval required: a pending ApprovalRequest with what the approver sees. Not
// required: the WriteBack row (outcome pending) is recorded with its decision and an audit entry
// and its execution is queued, all in the caller's transaction.

export const defaultApprovalTtlMs = 7 * 24 * 3600 * 1000;

export const newIdempotencyKey = () => `wb_${randomUUID().replaceAll("-", "")}`;

/** The run fields a WriteBack records as its provenance. */
export type WriteBackProvenance = { id: string; actor: string; triggerRuleId: string | null; stackDigest: string; contextDigest: string; promptHash: string };

/**
 * The WriteBack row (outcome pending, its own idempotency key) and its queued execution, in the
 * caller's transaction: written when the gate exempts a write-back, when a person approves one, or
 * when a person's own action is the write-back (re-open for agents). Label flips of one PR run in
 * one queue, so an escalation's flip and a later re-open's flip reach the forge in order.
 */
export async function createPendingWriteBack(
  tx: Tx,
  opts: {
    run: WriteBackProvenance;
    kind: WriteBackKind;
    approvalId?: string | null;
    attemptId?: string | null;
    approvedBy: string | null;
    artifactDigest?: string | null;
    target: Record<string, unknown> & { repository: string; prNumber?: number | null };
    now: Date;
  },
) {
  const wb = await tx.writeBack.create({
    data: {
      approvalId: opts.approvalId ?? null,
      runId: opts.run.id,
      attemptId: opts.attemptId ?? null,
      kind: opts.kind,
      actor: opts.run.actor,
      approvedBy: opts.approvedBy,
      triggerRuleId: opts.run.triggerRuleId,
      stackDigest: opts.run.stackDigest,
      contextDigest: opts.run.contextDigest,
      promptHash: opts.run.promptHash,
      artifactDigest: opts.artifactDigest ?? null,
      target: opts.target as Prisma.InputJsonValue,
      idempotencyKey: newIdempotencyKey(),
      createdAt: opts.now,
    },
  });
  const queueName = opts.kind === "set_labels" && opts.target.prNumber ? `labels:${opts.target.repository}#${opts.target.prNumber}` : undefined;
  if (opts.approvalId) await enqueue(tx, "writeback.execute", { approvalId: opts.approvalId }, { jobKey: `writeback:${opts.approvalId}`, queueName });
  else await enqueue(tx, "writeback.execute", { writeBackId: wb.id }, { jobKey: `writeback:${wb.id}`, queueName });
  return wb;
}

/** A set_labels request carries a valid label change and a PR; no other kind carries labels. */
function labelsOf(opts: { action: WriteBackKind; target: WriteBackTargetInput; labels?: LabelChange | null }): LabelChange | null {
  if (opts.action !== "set_labels") {
    if (opts.labels) throw new AppError("BAD_REQUEST", `A ${opts.action.replaceAll("_", " ")} write-back carries no label change.`, { reason: "invalid_write_back" });
    return null;
  }
  const parsed = zLabelChange.safeParse(opts.labels);
  if (!parsed.success) throw new AppError("BAD_REQUEST", `A label write-back needs a valid label change: ${parsed.error.issues.map((i) => i.message).join("; ")}`, { reason: "invalid_write_back" });
  if (!opts.target.prNumber) throw new AppError("BAD_REQUEST", "A label write-back names its pull request.", { reason: "invalid_write_back" });
  return parsed.data;
}

export type RequestWriteBackOptions = {
  db: Db;
  runId: string;
  action: WriteBackKind;
  target: WriteBackTargetInput;
  artifactId?: string | null;
  attemptId?: string | null;
  /** Comment/review body, or the commit message. */
  message?: string | null;
  /** set_labels: the labels added to and removed from the target PR. */
  labels?: LabelChange | null;
  /** What the kind carries beyond its target (a review's event, a rerun's plan, open_pr's PR...), shown and executed as shown. */
  extra?: PresentedExtra;
  /** A comment carrying the run's diagnosis (bot comments may skip approval): set by writebacks/diagnosis-comment.ts only. */
  isDiagnosisComment?: boolean;
  /**
   * What happens when a person must approve: an ApprovalRequest (the default), or nothing but the
   * stored decision ("skip": an automatic request that is only made when the gate exempts it).
   */
  whenRequired?: "request_approval" | "skip";
  ttlMs?: number;
  now?: Date;
};

export type RequestWriteBackResult =
  | { kind: "approval"; approvalId: string; policyDecisionId: string | null; reason: string }
  | { kind: "direct"; writeBackId: string; policyDecisionId: string; reason: string };

/** What askChangeGate may also answer: a person must approve and the caller asked for no approval. */
export type GateOutcome = RequestWriteBackResult | { kind: "skipped"; policyDecisionId: string | null; reason: string };

/** A review carries its event (APPROVE exactly for approve_review), a rerun its plan; no other kind carries either. */
function assertKindDetails(opts: { action: WriteBackKind; extra?: PresentedExtra }): void {
  const event = opts.extra?.review?.event;
  const isReview = opts.action === "review" || opts.action === "approve_review";
  if (isReview !== Boolean(event) || (opts.action === "rerun_workflow") !== Boolean(opts.extra?.rerun)) {
    throw new AppError("BAD_REQUEST", `A ${opts.action.replaceAll("_", " ")} write-back ${isReview ? "needs its review event" : opts.action === "rerun_workflow" ? "needs what it reruns" : "carries no review event or rerun"}.`, { reason: "invalid_write_back" });
  }
  if (isReview && (event === "APPROVE") !== (opts.action === "approve_review")) {
    throw new AppError("BAD_REQUEST", "An approving review is an approve_review write-back, and only it approves.", { reason: "invalid_write_back" });
  }
}

/**
 * The run's code origin as the change gate knows it, always asserted (an unrecorded one is
 * "unknown"): a stored policy version that predates the fact refuses it and the request fails
 * closed, rather than deciding a fork's comment without it.
 */
function originFact(run: { origin: string | null; isFork: boolean }): string {
  if (run.isFork) return "fork";
  return run.origin ?? "unknown";
}

export async function requestWriteBack(opts: Omit<RequestWriteBackOptions, "whenRequired">): Promise<RequestWriteBackResult> {
  const out = await askChangeGate(opts);
  if (out.kind === "skipped") throw new AppError("INTERNAL", "the change gate skipped a write-back that asked for an approval");
  return out;
}

/** requestWriteBack, with the choice of asking for no approval when one is required (whenRequired "skip"). */
export function askChangeGate(opts: RequestWriteBackOptions): Promise<GateOutcome> {
  const now = opts.now ?? new Date();
  const labels = labelsOf(opts);
  assertKindDetails(opts);
  return transaction(opts.db, "requestWriteBack", async (tx) => {
    const run = await tx.agentDispatchRun.findUnique({
      where: { id: opts.runId },
      include: { repository: { select: { id: true, fullName: true, writeBackExceptions: true, botCommentsAllowed: true } } },
    });
    if (!run) throw new AppError("NOT_FOUND", "No such run.");
    const artifact = opts.artifactId
      ? await tx.artifact.findFirst({ where: { id: opts.artifactId, runId: run.id }, select: { id: true, kind: true, name: true, digest: true, sizeBytes: true, attemptId: true, secretFindings: true } })
      : null;
    if (opts.artifactId && !artifact) throw new AppError("NOT_FOUND", "No such artifact on this run.");
    // Push protection: a patch with secrets is never pushed without a person, exception or not.
    const protectedPatch = artifact ? pushProtectionOf(artifact) : null;
    // A repository's exceptions cover write-backs of its own code: a fork's (or an unplaced) run
    // never claims one, so a stored policy version from before untrusted_origin_needs_approval
    // still asks a person for its code or words.
    const untrustedOrigin = untrustedOriginKinds.includes(opts.action) && originFact(run) !== "repository";
    const exempt = run.repository.writeBackExceptions.includes(opts.action) && !protectedPatch && !untrustedOrigin;

    const verdict = await changeGateVerdict(tx, {
      runId: run.id,
      subject: `write_back:${run.id}:${opts.action}:${artifact?.id ?? opts.target.prNumber ?? opts.target.check ?? "run"}`,
      facts: {
          kind: opts.action,
          approval_mode: stackSpecOf(run.stackSnapshot)?.spec.approvalMode ?? "always",
          repository_exempts_kind: exempt,
          is_diagnosis_comment: opts.isDiagnosisComment ?? false,
          bot_comments_allowed: run.repository.botCommentsAllowed,
          // Always asserted: a stored policy version from before the fact refuses it, and the
          // request fails closed (a person approves) until an admin saves the shipped version.
          run_origin: originFact(run),
      },
      whenFactsRefused: "approval is required",
    });
    const { required, policyDecisionId, rule: ruleName } = verdict;
    let reason = verdict.reason;
    if (required && opts.whenRequired === "skip") return { kind: "skipped", policyDecisionId, reason };
    const exception = !required ? `${opts.isDiagnosisComment && ruleName === "diagnosis_comment_allowed" ? "bot comments allowed" : `repository exception for ${opts.action.replaceAll("_", " ")}`} (rule ${ruleName ?? "default"})` : null;
    const target = { repository: run.repository.fullName, ...opts.target };
    const requestedEvent = { type: "write_back_requested" as const, payload: { action: opts.action, target: opts.target, ...(artifact ? { artifactDigest: artifact.digest } : {}) } };
    const labelsField = labels ? { labels } : {};

    if (protectedPatch) reason = `${reason} ${protectedPatch.note}`;
    if (!required && policyDecisionId && !protectedPatch) {
      const wb = await createPendingWriteBack(tx, {
        run,
        kind: opts.action,
        attemptId: artifact?.attemptId ?? opts.attemptId ?? null,
        approvedBy: null,
        artifactDigest: artifact?.digest ?? null,
        target: { ...target, message: opts.message ?? null, exception, policyDecisionId, ...labelsField, ...writeBackExtraOf(opts.extra) },
        now,
      });
      await appendRunEvents({ db: tx, runId: run.id, attemptId: opts.attemptId ?? undefined, events: [requestedEvent] });
      await recordAudit(tx, {
        actor: systemActor("change gate"),
        action: "writeback.exempt",
        objectType: "WriteBack",
        objectId: wb.id,
        repositoryId: run.repository.id,
        detail: { runId: run.id, action: opts.action, policyDecisionId, rule: ruleName, exception },
      });
      return { kind: "direct", writeBackId: wb.id, policyDecisionId, reason };
    }

    const presented = {
      ...(await buildPresented(tx, { run, action: opts.action, target: opts.target, artifact: artifact && { id: artifact.id, kind: artifact.kind, name: artifact.name, digest: artifact.digest, sizeBytes: artifact.sizeBytes }, message: opts.message ?? null, labels, reason, exception: null, pushProtection: protectedPatch, extra: opts.extra })),
      // What the agent whose work this is ran with (the attempt's stored launch record).
      ranWith: await ranWithOf(tx, { runId: run.id, attemptId: artifact?.attemptId ?? opts.attemptId ?? null }),
    };
    const expiresAt = new Date(now.getTime() + (opts.ttlMs ?? defaultApprovalTtlMs));
    const approval = await tx.approvalRequest.create({
      data: {
        runId: run.id,
        action: opts.action,
        targetBranch: opts.target.branch ?? null,
        targetPrNumber: opts.target.prNumber ?? null,
        targetCheck: opts.target.check ?? null,
        targetHeadSha: opts.target.headSha ?? null,
        artifactId: artifact?.id ?? null,
        artifactDigest: artifact?.digest ?? null,
        presented: presented as Prisma.InputJsonValue,
        status: "pending",
        policyDecisionId,
        expiresAt,
        createdAt: now,
      },
    });
    await appendRunEvents({
      db: tx,
      runId: run.id,
      attemptId: opts.attemptId ?? undefined,
      events: [
        { type: "write_back_requested", payload: { ...requestedEvent.payload, approvalId: approval.id } },
        {
          type: "approval_requested",
          payload: { approvalId: approval.id, action: opts.action, target: opts.target, ...(artifact ? { artifactId: artifact.id, artifactDigest: artifact.digest } : {}), reason, expiresAt: expiresAt.toISOString() },
        },
      ],
    });
    return { kind: "approval", approvalId: approval.id, policyDecisionId, reason };
  });
}
