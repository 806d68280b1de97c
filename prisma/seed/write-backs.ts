import type { Prisma, RunStatus } from "@/server/db";
import { presentedOf, type WriteBackTargetInput } from "@/server/domain/approvals/presented";
import type { BuildInput, BuiltRun } from "./built-run";
import { type Admission, poolByName } from "./pools";
import type { RunPlan, WriteBackPlan } from "./run-plan";
import type { ProducedArtifact, Transcript } from "./transcript";
import { demoUsers, type DemoUserKey } from "./users";
import { addMs, contentDigest, minutes, newId } from "./util";

// After a successful attempt: exempt write-backs run at once; gated ones request
// approval, and each decision (approve, reject, expire, execute, fail) is played
// into the transcript with its approval and write-back rows.

export type WriteBackCtx = {
  input: BuildInput;
  out: BuiltRun;
  tb: Transcript;
  plan: RunPlan;
  admission: Admission | null;
  produced: (ProducedArtifact & { createdAt: Date; attemptId: string })[];
  attemptId: string | null;
  runStatus: (to: RunStatus, reason: string) => void;
  audit: (k: DemoUserKey, action: string, objectType: string, objectId: string, detail: Prisma.InputJsonObject) => void;
};

/** Exempt write-backs run at once; gated ones request approval and play their decisions. Returns finishedAt. */
export function playWriteBacks(ctx: WriteBackCtx): Date | null {
  const { input, out, tb, plan, produced } = ctx;
  const { context, snapshot } = input;
  const ref = context.bundle.ref as { branch: string; sha: string; tag: string | null };
  const pipelineCheck = (context.bundle.pipeline as { checkName: string } | null)?.checkName;
  const target = (w: WriteBackPlan) => ({
    branch: w.action === "publish_release" ? (ref.tag ?? ref.branch) : w.action === "push_commits" ? ref.branch : undefined,
    prNumber: plan.pr,
    check: w.action === "rerun_workflow" ? pipelineCheck : undefined,
    headSha: ref.sha,
  });
  const artifactOf = (w: WriteBackPlan) => (w.artifact ? produced.find((a) => a.kind === w.artifact) : undefined);
  const provenance = (w: WriteBackPlan, approvalId: string | null, approver: DemoUserKey | null) => {
    const art = artifactOf(w);
    return {
      id: newId(),
      approvalId,
      runId: input.runId,
      attemptId: ctx.attemptId,
      kind: w.action,
      actor: "user" in plan.actor ? demoUsers[plan.actor.user].login : plan.actor.login,
      approvedBy: approver ? demoUsers[approver].email : null,
      triggerRuleId: input.ids.ruleId,
      stackDigest: snapshot.digest,
      contextDigest: context.digest,
      promptHash: context.promptHash,
      artifactDigest: art ? contentDigest(art.content).digest : null,
      target: { repository: plan.repo, ...target(w) },
      // The form the local forge accepts as a file name (its notes are stored by key).
      idempotencyKey: `wb_seed_${input.runId}_${w.action}_${approvalId ?? "exempt"}`,
      createdAt: tb.t,
    } satisfies Prisma.WriteBackCreateManyInput;
  };

  for (const w of plan.writeBacks ?? []) {
    if (!w.gate.exempt) continue;
    const art = artifactOf(w);
    tb.wait(600).emit("write_back_requested", { action: w.action, target: target(w), artifactDigest: art ? contentDigest(art.content).digest : undefined });
    const row = provenance(w, null, null);
    tb.wait(1_100).emit("write_back_completed", { writeBackId: row.id, action: w.action, outcome: "succeeded", externalRef: w.gate.externalRef });
    out.writeBacks.push({ ...row, externalRef: w.gate.externalRef, outcome: "succeeded", completedAt: tb.t });
  }

  const gated = (plan.writeBacks ?? []).flatMap((w) => (w.gate.exempt ? [] : [{ w, gate: w.gate, approvalId: newId(), requestedAt: new Date(0) }]));
  for (const g of gated) {
    const art = artifactOf(g.w);
    const digest = art ? contentDigest(art.content).digest : undefined;
    const expiresAt = addMs(tb.t, minutes((g.gate.expiresAfterH ?? 48) * 60));
    g.requestedAt = tb.wait(500).t;
    tb.emit("approval_requested", { approvalId: g.approvalId, action: g.w.action, target: target(g.w), artifactId: art?.id, artifactDigest: digest, reason: g.gate.why, expiresAt: expiresAt.toISOString() });
    const t = target(g.w);
    out.approvals.push({
      id: g.approvalId,
      runId: input.runId,
      action: g.w.action,
      targetBranch: t.branch,
      targetPrNumber: t.prNumber,
      targetCheck: t.check,
      targetHeadSha: t.headSha,
      artifactId: art?.id,
      artifactDigest: digest,
      presented: presented(ctx, g.w, t, art, g.gate.why),
      status: "pending",
      expiresAt,
      createdAt: g.requestedAt,
    });
  }
  if (gated.length === 0) {
    ctx.runStatus("succeeded", "the attempt finished with nothing left to approve");
    return tb.t;
  }
  ctx.runStatus("awaiting_approval", "the attempt finished and requested write-backs that need approval");

  const timeline = gated
    .filter((g) => g.gate.decision.status !== "pending")
    .sort((a, b) => decisionAt(a) - decisionAt(b));
  function decisionAt(g: (typeof gated)[number]) {
    const d = g.gate.decision;
    return d.status === "pending" ? Infinity : g.requestedAt.getTime() + minutes(d.afterMin);
  }
  for (const g of timeline) {
    const d = g.gate.decision;
    if (d.status === "pending") continue;
    tb.flush(new Date(decisionAt(g)));
    const approval = out.approvals.find((a) => a.id === g.approvalId)!;
    const t = target(g.w);
    if (d.status === "expired") {
      tb.emit("log", { stream: "system", text: `Approval for ${g.w.action.replace("_", " ")} expired without a decision.` });
      approval.status = "expired";
      approval.reason = `no decision within ${g.gate.expiresAfterH ?? 48} h`;
      continue;
    }
    approval.decidedById = input.ids.users[d.by];
    approval.decidedAt = tb.t;
    if (d.status === "rejected") {
      tb.emit("log", { stream: "system", text: `${demoUsers[d.by].name} rejected ${g.w.action.replace("_", " ")}: ${d.reason}` });
      Object.assign(approval, { status: "rejected", reason: d.reason });
      ctx.audit(d.by, "approval.reject", "ApprovalRequest", g.approvalId, { runId: input.runId, action: g.w.action, reason: d.reason });
      continue;
    }
    tb.emit("log", { stream: "system", text: `${demoUsers[d.by].name} approved ${g.w.action.replace("_", " ")}.` });
    ctx.audit(d.by, "approval.approve", "ApprovalRequest", g.approvalId, { runId: input.runId, action: g.w.action, artifactDigest: approval.artifactDigest ?? null });
    approval.status = "approved";
    tb.wait(300).emit("write_back_requested", { approvalId: g.approvalId, action: g.w.action, target: t, artifactDigest: approval.artifactDigest ?? undefined });
    // A seeded decision is played through to its write-back's outcome: an approved write-back
    // left pending would have no job to execute it, and the run would show it executing forever.
    const row = provenance(g.w, g.approvalId, d.by);
    tb.wait(2_400);
    if (d.status === "executed") {
      tb.emit("write_back_completed", { writeBackId: row.id, approvalId: g.approvalId, action: g.w.action, outcome: "succeeded", externalRef: d.externalRef });
      out.writeBacks.push({ ...row, externalRef: d.externalRef, outcome: "succeeded", completedAt: tb.t });
      approval.status = "executed";
      if (d.followUp) tb.wait(minutes(1)).emit("log", { stream: "system", text: d.followUp });
    } else {
      tb.emit("write_back_completed", { writeBackId: row.id, approvalId: g.approvalId, action: g.w.action, outcome: "failed", error: d.error });
      out.writeBacks.push({ ...row, outcome: "failed", error: d.error, completedAt: tb.t });
      approval.status = "failed";
    }
  }
  const statuses = out.approvals.map((a) => a.status);
  if (statuses.includes("pending")) return null;
  if (statuses.includes("failed")) ctx.runStatus("failed", "an approved write-back failed to execute");
  else if (statuses.every((s) => s === "executed")) ctx.runStatus("succeeded", "every approval was decided and the approved write-backs executed");
  else ctx.runStatus("escalated", "approvals were rejected or expired; a person takes over");
  return tb.t;
}

/** What the approver saw, frozen at request time: the real request's shape, built by the same function. */
function presented(ctx: WriteBackCtx, w: WriteBackPlan, target: WriteBackTargetInput, art: ProducedArtifact | undefined, why: string): Prisma.InputJsonObject {
  const { context, snapshot } = ctx.input;
  const a = ctx.admission;
  return presentedOf({
    run: {
      prompt: context.prompt,
      promptHash: context.promptHash,
      contextDigest: context.digest,
      stackSnapshot: snapshot.snapshot as unknown as Prisma.JsonValue,
      stackDigest: snapshot.digest,
      repository: { fullName: ctx.plan.repo },
    },
    contextLabels: context.labels,
    admission: a
      ? {
          pool: { name: a.poolName, trustTier: a.trustTier, kind: poolByName(a.poolName).kind },
          runtimeServiceAccount: a.runtimeServiceAccount,
          runnerServiceAccount: a.runnerServiceAccount,
          secretsGranted: a.secretsGranted,
          secretsDenied: a.secretsDenied,
          configMapsGranted: a.configMapsGranted,
          configMapsDenied: [],
        }
      : null,
    action: w.action,
    target,
    artifact: art ? { id: art.id, kind: art.kind, name: art.name, ...contentDigest(art.content) } : null,
    message: null,
    reason: why,
    exception: null,
  });
}
