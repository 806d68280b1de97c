import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { RepoRole } from "@/server/db";
import { AppError } from "@/server/errors";
import { type AuditActor, recordAudit } from "../audit";
import { askChangeGate, type GateOutcome } from "../approvals/request-write-back";
import { appendRunEvents } from "../events/append";
import { inertSummary, maxSummaryChars } from "../inert-text";
import { lockRun } from "../runs/transition";

// The diagnosis summary of a finished diagnosis run, posted on its pull request as a comment.
// Asked for automatically when the run ends (run.ended): posted without a person only when the
// change gate exempts it (the repository allows bot comments, the stack allows exceptions, the
// run worked on the repository's own code), with the decision stored; otherwise nothing is
// posted and the run page offers "Post diagnosis as a comment", which asks for an approval
// showing exactly the bytes below. The body is built here and nowhere else: the agent's text is
// bounded and made inert (no HTML, no mentions, no hidden markers, no control characters).

/** The exact comment body (the forge appends only its hidden write-back marker line). */
export function diagnosisCommentBody(opts: { runNumber: number; artifactDigest: string; summary: string }): string {
  const { text, cut } = inertSummary(opts.summary);
  const lines = [
    `**Airlock diagnosis** (run #${opts.runNumber})`,
    "",
    text || "_The diagnosis is empty._",
    "",
    ...(cut ? [`_Cut at ${maxSummaryChars.toLocaleString("en")} characters; the whole diagnosis is on the run page._`, ""] : []),
    `<sub>Written by an agent and posted by Airlock · diagnosis ${opts.artifactDigest}</sub>`,
  ];
  return lines.join("\n");
}

type RunForComment = {
  id: string;
  number: number;
  status: string;
  taskKind: string;
  pullRequest: { number: number } | null;
  repositoryId: string;
};

/** Why the run has no diagnosis comment to ask for (null: it may be asked for). */
export function diagnosisCommentRefusal(run: Pick<RunForComment, "status" | "taskKind" | "pullRequest">, hasDiagnosis: boolean): string | null {
  if (run.taskKind !== "diagnose") return "Only a diagnosis run posts its diagnosis as a comment.";
  if (run.status !== "succeeded") return "The diagnosis is posted once the run has succeeded.";
  if (!run.pullRequest) return "The run has no pull request to comment on.";
  if (!hasDiagnosis) return "The run produced no diagnosis.";
  return null;
}

/** The verdict the run page shows beside "Post diagnosis as a comment". */
export async function diagnosisCommentControl(db: Db, opts: { run: Pick<RunForComment, "id" | "status" | "taskKind" | "pullRequest">; role: RepoRole }): Promise<{ allowed: boolean; reason: string | null }> {
  if (opts.run.taskKind !== "diagnose" || !opts.run.pullRequest) return { allowed: false, reason: diagnosisCommentRefusal(opts.run, true) };
  const [diagnosis, open] = await Promise.all([
    db.artifact.findFirst({ where: { runId: opts.run.id, kind: "diagnosis" }, select: { id: true } }),
    openCommentOf(db, opts.run.id),
  ]);
  const refusal = diagnosisCommentRefusal(opts.run, Boolean(diagnosis)) ?? (open ? `Already asked for (${open}).` : null) ?? (opts.role === "viewer" ? "Asking for a comment needs the maintainer role." : null);
  return { allowed: refusal === null, reason: refusal };
}

/** An earlier request for this run's comment that still stands (pending, approved, executed, or a write-back not failed). */
async function openCommentOf(db: Db | Tx, runId: string): Promise<string | null> {
  const [approval, writeBack] = await Promise.all([
    db.approvalRequest.findFirst({ where: { runId, action: "comment", status: { in: ["pending", "approved", "executed"] } }, select: { id: true, status: true } }),
    db.writeBack.findFirst({ where: { runId, kind: "comment", outcome: { in: ["pending", "succeeded"] } }, select: { id: true, outcome: true } }),
  ]);
  if (writeBack) return `write-back ${writeBack.id} ${writeBack.outcome}`;
  if (approval) return `approval ${approval.id} ${approval.status}`;
  return null;
}

export type DiagnosisCommentResult = GateOutcome | { kind: "exists"; detail: string } | { kind: "not_applicable"; reason: string };

/**
 * Asks the change gate for the run's diagnosis comment. `by` null: the automatic request at the
 * run's end, made only when the gate exempts it. A person: an approval when the gate says so.
 * The run row is locked, so two requests (the reaction retried, a double click) make one.
 */
export function requestDiagnosisComment(opts: { db: Db; runId: string; by: AuditActor | null; now?: Date }): Promise<DiagnosisCommentResult> {
  const now = opts.now ?? new Date();
  return transaction(opts.db, "requestDiagnosisComment", async (tx) => {
    if (!(await lockRun(tx, opts.runId))) {
      if (opts.by) throw new AppError("NOT_FOUND", "No such run.");
      return { kind: "not_applicable", reason: "no such run" };
    }
    const run = await tx.agentDispatchRun.findUniqueOrThrow({
      where: { id: opts.runId },
      select: { id: true, number: true, status: true, taskKind: true, repositoryId: true, pullRequest: { select: { number: true } } },
    });
    const diagnosis = await tx.artifact.findFirst({ where: { runId: run.id, kind: "diagnosis" }, orderBy: { createdAt: "desc" }, select: { id: true, digest: true, content: true } });
    const refusal = diagnosisCommentRefusal(run, Boolean(diagnosis?.content));
    if (refusal || !diagnosis?.content || !run.pullRequest) {
      if (opts.by) throw new AppError("PRECONDITION_FAILED", refusal ?? "The run has no diagnosis to post.", { reason: "no_diagnosis_comment" });
      return { kind: "not_applicable", reason: refusal ?? "no diagnosis" };
    }
    const open = await openCommentOf(tx, run.id);
    if (open) {
      if (opts.by) throw new AppError("CONFLICT", `This run's diagnosis comment was already asked for (${open}).`, { reason: "already_requested" });
      return { kind: "exists", detail: open };
    }
    const message = diagnosisCommentBody({ runNumber: run.number, artifactDigest: diagnosis.digest, summary: diagnosis.content });
    const asked = await askChangeGate({
      db: tx,
      runId: run.id,
      action: "comment",
      target: { prNumber: run.pullRequest.number },
      artifactId: diagnosis.id,
      message,
      isDiagnosisComment: true,
      whenRequired: opts.by ? "request_approval" : "skip",
      now,
    });
    if (asked.kind === "skipped") {
      await appendRunEvents({
        db: tx,
        runId: run.id,
        events: [{ type: "log", payload: { stream: "system", text: `The diagnosis was not posted on #${run.pullRequest.number}: ${asked.reason} A maintainer can ask for it ("Post diagnosis as a comment"); a person approves it.` } }],
      });
    }
    if (opts.by) {
      await recordAudit(tx, {
        actor: opts.by,
        action: "writeback.request",
        objectType: "AgentDispatchRun",
        objectId: run.id,
        repositoryId: run.repositoryId,
        detail: { action: "comment", prNumber: run.pullRequest.number, artifactDigest: diagnosis.digest, ...(asked.kind === "approval" ? { approvalId: asked.approvalId } : asked.kind === "direct" ? { writeBackId: asked.writeBackId } : {}) },
      });
    }
    return asked;
  });
}
