import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { Prisma, RunStatus } from "@/server/db";
import { env } from "@/server/env";
import type { BuildInput, BuiltRun } from "./built-run";
import { poolByName } from "./pools";
import type { AttemptPlan } from "./run-plan";
import { caseBeats, playSession, type ProducedArtifact, reportBeats, Transcript } from "./transcript";
import { playWriteBacks } from "./write-backs";
import { demoUsers, type DemoUserKey } from "./users";
import { addMs, contentDigest, minutes, newId } from "./util";

// One plan -> the rows of one run: the run, its attempts, transcript, artifacts,
// approvals, write-backs, dropped duplicate triggers and audit entries. Status
// events follow the run and attempt state machines (server/domain/runs/lifecycle).

const attemptVerb: Record<Exclude<AttemptPlan["outcome"], "succeeded">, string> = {
  failed: "failed",
  lost: "was lost",
  timed_out: "timed out",
  cancelled: "was cancelled",
};

export function buildRun(input: BuildInput): BuiltRun {
  const { plan, runId, createdAt, now, context, snapshot } = input;
  const spec = snapshot.spec;
  const out: BuiltRun = { run: undefined as never, attempts: [], events: [], artifacts: [], approvals: [], writeBacks: [], drops: [], audit: [] };
  const tb = new Transcript(createdAt, now);
  const userName = (k: DemoUserKey) => demoUsers[k].name;
  const audit = (k: DemoUserKey, action: string, objectType: string, objectId: string, detail: Prisma.InputJsonObject) =>
    out.audit.push({ actorUserId: input.ids.users[k], actor: demoUsers[k].email, action, objectType, objectId, repositoryId: null, detail, createdAt: tb.t });
  let status: RunStatus | null = null;
  const runStatus = (to: RunStatus, reason: string) => {
    tb.emit("status", { scope: "run", from: status, to, reason });
    status = to;
  };
  const isFork = plan.isFork ?? false;
  const model = spec.adapter.kind === "scripted" ? null : spec.model;
  const admission = input.admission;

  // ------------------------------------------------ trigger, context, first status
  if (input.ids.ruleId && plan.rule) {
    tb.emit("trigger_matched", { ruleId: input.ids.ruleId, ruleName: plan.rule, triggerKind: plan.source, dedupeKey: input.dedupeKey, deliveryId: plan.delivery ? input.ids.deliveryIds.get(plan.delivery) : undefined });
  }
  for (const d of plan.drops ?? []) {
    tb.schedule(addMs(createdAt, minutes(d.afterMin)), () => {
      const deliveryId = input.ids.deliveryIds.get(d.delivery);
      tb.emit("dispatch_skipped", { reason: d.reason, dedupeKey: input.dedupeKey, ruleId: input.ids.ruleId ?? undefined, existingRunId: runId });
      out.drops.push({ dedupeKey: input.dedupeKey, reason: d.reason, deliveryId, ruleId: input.ids.ruleId, runId, createdAt: tb.t });
    });
  }
  tb.wait(900).emit("context_assembled", {
    digest: context.digest,
    promptHash: context.promptHash,
    sizeBytes: context.sizeBytes,
    labels: context.labels,
    redactions: context.redactions,
    truncated: false,
  });
  if (context.redactions > 0) tb.emit("log", { stream: "system", text: `Context redaction: ${context.redactions} secret value(s) masked in the log excerpt (rule npm-token).` });
  if (plan.source === "manual" || plan.source === "resume" || plan.source === "fork") {
    if ("user" in plan.actor) audit(plan.actor.user, "run.create", "AgentDispatchRun", runId, { source: plan.source, taskKind: plan.taskKind, parentRunId: input.parentRunId });
  }
  runStatus(plan.start.as, plan.start.reason);

  let startedAt: Date | null = null;
  let finishedAt: Date | null = null;
  const produced: (ProducedArtifact & { createdAt: Date; attemptId: string })[] = [];
  let lastAttemptId: string | null = null;
  const totals = { inputTokens: 0, outputTokens: 0, usd: 0 };

  if (plan.start.as === "suggested") {
    const then = plan.start.then;
    if (then && "dispatchedBy" in then) {
      tb.wait(minutes(then.afterMin));
      if (then.dispatchedBy === "policy") runStatus("queued", "repository policy auto-runs failed-check suggestions on acme/payments-api");
      else {
        runStatus("queued", `${userName(then.dispatchedBy)} dispatched the suggestion`);
        audit(then.dispatchedBy, "run.dispatch", "AgentDispatchRun", runId, { from: "suggested" });
      }
    } else if (then && "dismissedBy" in then) {
      tb.wait(minutes(then.afterMin));
      runStatus("cancelled", `${userName(then.dismissedBy)} dismissed the suggestion: ${then.reason}`);
      audit(then.dismissedBy, "run.dismiss", "AgentDispatchRun", runId, { reason: then.reason });
      finishedAt = tb.t;
    }
  }

  // ------------------------------------------------ attempts
  // Beats are made per attempt: a retry replays the session with its own tool and subagent ids.
  const sessionBeats = () => ("report" in plan.content ? reportBeats(plan.content.report) : caseBeats(plan.content.case, plan.content.task, spec));
  const pool = plan.pool ? poolByName(plan.pool) : null;
  plan.attempts.forEach((a, i) => {
    const n = i + 1;
    const attemptId = newId();
    lastAttemptId = attemptId;
    tb.attemptId = attemptId;
    const queuedAt = tb.wait(400).t;
    tb.emit("queue", { phase: "queued", attemptNumber: n, poolName: plan.pool });
    tb.emit("status", { scope: "attempt", attemptNumber: n, from: null, to: "queued", reason: n === 1 ? "the run was queued" : `retry ${n - 1} of ${spec.limits.maxRetries}` });
    const row: Prisma.DispatchAttemptCreateManyInput = { id: attemptId, runId, number: n, status: "queued", fencingToken: n, queuedAt };
    out.attempts.push(row);
    if (a.outcome === "cancelled" && (a.beats ?? 0) === 0) {
      tb.wait(minutes(a.queueMin ?? 1));
      tb.emit("status", { scope: "attempt", attemptNumber: n, from: "queued", to: "cancelled", reason: a.reason ?? "the run was cancelled before the attempt started" });
      Object.assign(row, { status: "cancelled", finishedAt: tb.t, exitReason: a.reason });
      runStatus("cancelled", a.reason ?? "cancelled");
      if (plan.cancelledBy) audit(plan.cancelledBy, "run.cancel", "AgentDispatchRun", runId, { reason: a.reason ?? null });
      finishedAt = tb.t;
      return;
    }
    if (!admission || !pool) throw new Error(`seed: run ${plan.key} starts an attempt without a pool`);
    tb.wait(minutes(a.queueMin ?? 0.15));
    tb.emit("admission", { ...admission, policyDecisionId: undefined });
    tb.emit("queue", { phase: "dequeued", attemptNumber: n, poolName: pool.name, waitMs: tb.t.getTime() - queuedAt.getTime() });
    tb.emit("status", { scope: "attempt", attemptNumber: n, from: "queued", to: "starting", reason: "a worker picked the attempt and is preparing its workspace" });
    const sessionId = spec.adapter.kind === "scripted" ? `scripted-${randomUUID()}` : randomUUID();
    const workspacePath = pool.kind === "kubernetes" ? "/workspace" : resolve(env.AIRLOCK_DATA_DIR, "workspaces", runId, `attempt-${n}`);
    const runnerRef = pool.kind === "kubernetes" ? `airlock-agents/job/airlock-run-${runId.slice(-8)}-a${n}` : `worker-${1 + (i % 2)}/pid-${41_000 + ((runId.charCodeAt(9) * 97 + n * 13) % 9_000)}`;
    tb.wait(1_800).emit("log", { stream: "system", text: `Workspace ready: git worktree of ${plan.repo} at ${input.base.headSha.slice(0, 7)} in ${workspacePath}` });
    tb.wait(1_200).emit("status", { scope: "attempt", attemptNumber: n, from: "starting", to: "running", reason: "the agent session started" });
    startedAt ??= tb.t;
    const attemptStart = tb.t;
    if (status !== "running") runStatus("running", `attempt ${n} started on runner pool ${pool.name}`);
    Object.assign(row, {
      status: "running",
      runnerPoolId: input.ids.pools[pool.name],
      runtimeServiceAccount: admission.runtimeServiceAccount,
      runnerServiceAccount: admission.runnerServiceAccount,
      workspacePath,
      adapterSessionId: sessionId,
      runnerRef,
      startedAt: attemptStart,
    });
    const partial = a.outcome !== "succeeded";
    const session = playSession(tb, sessionBeats(), {
      sessionId,
      model,
      upTo: partial ? a.beats : undefined,
      final: a.outcome === "succeeded" || a.outcome === "cancelled" || a.outcome === "failed",
    });
    produced.push(...session.artifacts.map((x) => ({ ...x, attemptId })));
    // An attempt's input tokens count everything the model read, cached or not.
    const inputTokens = session.totals.inputTokens + session.totals.cacheReadTokens + session.totals.cacheWriteTokens;
    Object.assign(row, { inputTokens, outputTokens: session.totals.outputTokens, costUsd: session.totals.usd.toFixed(6), heartbeatAt: tb.t });
    totals.inputTokens += inputTokens;
    totals.outputTokens += session.totals.outputTokens;
    totals.usd += session.totals.usd;

    if (a.outcome === "succeeded") {
      tb.wait(700).emit("status", { scope: "attempt", attemptNumber: n, from: "running", to: "succeeded", reason: "the agent exited cleanly" });
      Object.assign(row, { status: "succeeded", finishedAt: tb.t, exitReason: spec.adapter.kind === "scripted" ? `scenario ${spec.adapter.scenario} completed (exit 0)` : "agent exited cleanly (exit 0)" });
      return;
    }
    // failed, lost, timed_out, cancelled
    if (a.outcome === "lost") tb.wait(120_000);
    if (a.outcome === "timed_out") tb.flush(addMs(attemptStart, minutes(spec.limits.wallClockMinutes)));
    if (a.outcome === "failed") tb.emit("log", { stream: "stderr", text: a.reason ?? "agent exited with an error" });
    tb.emit("status", { scope: "attempt", attemptNumber: n, from: "running", to: a.outcome, reason: a.reason ?? `the attempt ${attemptVerb[a.outcome]}` });
    Object.assign(row, { status: a.outcome, finishedAt: tb.t, exitReason: a.reason });
    const last = n === plan.attempts.length;
    if (a.outcome === "cancelled") {
      runStatus("cancelled", a.reason ?? "cancelled by a person");
      if (plan.cancelledBy) audit(plan.cancelledBy, "run.cancel", "AgentDispatchRun", runId, { reason: a.reason ?? null, attemptNumber: n });
      finishedAt = tb.t;
    } else if (last) {
      runStatus("failed", `attempt ${n} ${attemptVerb[a.outcome]} and no retry is left`);
      finishedAt = tb.t;
    } else {
      runStatus("queued", `attempt ${n} ${attemptVerb[a.outcome]}; retrying (${n} of ${spec.limits.maxRetries})`);
    }
  });
  tb.attemptId = null;

  for (const art of produced) {
    const { digest, sizeBytes } = contentDigest(art.content);
    out.artifacts.push({ id: art.id, runId, attemptId: art.attemptId, kind: art.kind, name: art.name, content: art.content, mediaType: art.mediaType, digest, sizeBytes, retainUntil: addMs(art.createdAt, minutes(90 * 24 * 60)), createdAt: art.createdAt });
  }

  // ------------------------------------------------ after a successful attempt
  const finalAttempt = out.attempts.at(-1);
  if (status === "running" && finalAttempt?.status === "succeeded") {
    if (plan.escalation) {
      runStatus("escalated", plan.escalation);
      finishedAt = tb.t;
    } else {
      finishedAt = playWriteBacks({ input, out, tb, plan, admission, produced, attemptId: lastAttemptId, runStatus: (to, reason) => runStatus(to, reason), audit });
    }
  }
  if (status !== plan.end) throw new Error(`seed: run ${plan.key} ended ${status}, planned ${plan.end}`);
  tb.drain();
  for (const e of tb.events) out.events.push({ runId, seq: e.seq, type: e.type, payload: e.payload as Prisma.InputJsonObject, attemptId: e.attemptId, createdAt: e.createdAt });

  const emailById = new Map((Object.keys(demoUsers) as DemoUserKey[]).map((k) => [input.ids.users[k], demoUsers[k].email]));
  const approvers = out.approvals.flatMap((a) => (a.decidedById && a.status !== "rejected" ? [a.decidedById] : []));
  out.run = {
    ...input.base,
    id: runId,
    title: plan.title,
    source: plan.source,
    taskKind: plan.taskKind,
    actor: "user" in plan.actor ? demoUsers[plan.actor.user].login : plan.actor.login,
    actorUserId: "user" in plan.actor ? input.ids.users[plan.actor.user] : null,
    status: plan.end,
    isFork,
    parentRunId: input.parentRunId,
    runnerPoolId: admission ? input.ids.pools[admission.poolName] : null,
    admission: admission ? { ...admission } : undefined,
    costUsd: totals.usd.toFixed(6),
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    attribution: {
      actor: "user" in plan.actor ? demoUsers[plan.actor.user].login : plan.actor.login,
      source: plan.source,
      triggerRule: plan.rule ?? null,
      approvedBy: approvers.map((id) => emailById.get(id) ?? id),
      stackDigest: snapshot.digest,
      contextDigest: context.digest,
      promptHash: context.promptHash,
    },
    lastEventSeq: tb.events.length,
    createdAt,
    updatedAt: tb.events.at(-1)?.createdAt ?? createdAt,
    startedAt,
    finishedAt,
  };
  return out;
}
