import type { Prisma, Tx } from "@/server/db";
import { AppError } from "@/server/errors";
import { auditActorOf, systemActor, type UserActor } from "../actor";
import { recordAudit } from "../audit";
import type { RunEventInput } from "../events/catalogue";
import type { AdmissionDecision } from "../pools/admission";
import { enqueueDispatch } from "../runs/attempts";
import { admissionFor, stackSpecOf } from "../runs/admit-attempt";
import { launchChanges, launchDigest, launchRecord } from "./privileged-launch";
import { lockRun, transitionAttempt, transitionRun } from "../runs/transition";
import { contextLabelsOf, presentedOf } from "./presented";
import { defaultApprovalTtlMs } from "./request-write-back";
import { type LaunchRecord, type PresentedLaunch, zPresentedLaunch } from "./schemas";
import { changeGateVerdict } from "./change-gate-verdict";
import { transitionApproval } from "./transition";

// Privileged work waits for a person before it starts. When admission would grant a privileged
// secret, a privileged MCP server or open network, the claim asks the change gate (kind
// privileged_capability; the shipped rule always requires approval, and a repository admin's
// narrower exception is a rule of that policy, decided and stored with its proof). Required: the
// attempt stays queued, the run waits (queued -> awaiting_approval) and an ApprovalRequest shows
// exactly what will launch (launchRecord), bound to its digest. Approving re-queues the run; the
// claim launches only while what it would launch with still has that digest, and marks the
// approval executed in the claim's transaction, so a replayed approve or job launches once.
// Anything changed (the run's stack snapshot or bundle, a grant, the pool's accounts or network)
// makes the approval stale: it cannot launch, and re-admission asks again.

export type LaunchRunRow = {
  id: string;
  repositoryId: string;
  prompt: string;
  promptHash: string;
  contextDigest: string;
  contextBundle: Prisma.JsonValue;
  stackSnapshot: Prisma.JsonValue;
  stackDigest: string;
  repository: { fullName: string; writeBackExceptions: string[]; botCommentsAllowed: boolean };
};

/** What a launch record is built from: the run's frozen prompt, bundle and stack snapshot. */
export type LaunchSource = Pick<LaunchRunRow, "id" | "prompt" | "promptHash" | "contextDigest" | "contextBundle" | "stackSnapshot" | "stackDigest">;

const subjectOf = (attemptId: string) => `privileged_capability:attempt:${attemptId}`;

/** The record the attempt would launch with under `decision` (null: nothing would launch). */
export async function currentLaunch(tx: Tx, run: LaunchSource, decision: AdmissionDecision): Promise<{ record: LaunchRecord; digest: string } | null> {
  const stack = stackSpecOf(run.stackSnapshot);
  if (!stack) return null;
  const snapshot = run.stackSnapshot as { version?: unknown } | null;
  const record = launchRecord({
    run,
    name: stack.name,
    version: typeof snapshot?.version === "number" ? snapshot.version : null,
    spec: stack.spec,
    decision,
    contextLabels: await contextLabelsOf(tx, run),
  });
  return record ? { record, digest: launchDigest(record) } : null;
}

/** The privileged_capability approvals of one attempt, newest first. */
async function approvalsOf(tx: Tx, runId: string, attemptId: string) {
  const rows = await tx.approvalRequest.findMany({
    where: { runId, action: "privileged_capability", status: { in: ["pending", "approved"] } },
    orderBy: { createdAt: "desc" },
    select: { id: true, runId: true, status: true, presented: true },
  });
  return rows.flatMap((r) => {
    const launch = zPresentedLaunch.safeParse((r.presented as { launch?: unknown } | null)?.launch);
    return launch.success && launch.data.attemptId === attemptId ? [{ ...r, launch: launch.data }] : [];
  });
}

export type PrivilegedGate =
  | { kind: "launch"; approvalId: string | null; exception: string | null }
  | { kind: "held"; approvalId: string; reason: string };

/**
 * The claim's gate for an admitted attempt with privileged capabilities (caller holds the run
 * lock, the run is queued). `current` is what it would launch with now. An approved request for
 * exactly that launches; an approved one for something else is stale (failed, with what
 * changed); then the change gate decides, and a required approval holds the run.
 */
export async function gatePrivilegedLaunch(
  tx: Tx,
  opts: { run: LaunchRunRow; attempt: { id: string; number: number }; current: { record: LaunchRecord; digest: string }; events: RunEventInput[]; now: Date },
): Promise<PrivilegedGate> {
  const { run, attempt, current, now } = opts;
  const open = await approvalsOf(tx, run.id, attempt.id);
  for (const a of open) {
    if (a.status === "approved" && a.launch.digest === current.digest) return { kind: "launch", approvalId: a.id, exception: null };
    if (a.status === "pending" && a.launch.digest === current.digest) return { kind: "held", approvalId: a.id, reason: "its privileged capabilities wait for a person's approval" };
    const why = `stale: ${launchChanges(a.launch.record, current.record).join(", ") || "what it would launch with"} changed since it was requested`;
    await transitionApproval(tx, { approval: a, to: a.status === "approved" ? "failed" : "expired", data: { decidedAt: now, reason: why } });
    opts.events.push({ type: "log", payload: { stream: "system", text: `Approval ${a.id} of attempt ${attempt.number}'s privileged capabilities cannot launch: ${why}.` } });
  }

  const caps = current.record.privileged;
  const stack = stackSpecOf(run.stackSnapshot);
  const { required, policyDecisionId, rule, reason } = await changeGateVerdict(tx, {
    runId: run.id,
    subject: subjectOf(attempt.id),
    facts: {
        kind: "privileged_capability",
        approval_mode: stack?.spec.approvalMode ?? "always",
        repository_exempts_kind: run.repository.writeBackExceptions.includes("privileged_capability"),
        is_diagnosis_comment: false,
        bot_comments_allowed: run.repository.botCommentsAllowed,
        repository: run.repository.fullName,
        grants_privileged_secret: caps.some((c) => c.kind === "secret"),
        grants_privileged_mcp_server: caps.some((c) => c.kind === "mcp_server"),
        grants_open_network: caps.some((c) => c.kind === "network"),
    },
    whenFactsRefused: "a person approves the privileged capabilities",
  });
  const named = caps.map((c) => `${c.kind === "mcp_server" ? "MCP server" : c.kind} ${c.name}`).join(", ");

  if (!required && policyDecisionId) {
    const exception = `change-gate rule ${rule ?? "default"}: ${reason}`;
    opts.events.push({ type: "log", payload: { stream: "system", text: `Attempt ${attempt.number} launches with ${named} without an approval: ${exception} (decision ${policyDecisionId}).` } });
    await recordAudit(tx, {
      actor: systemActor("change gate"),
      action: "privileged_capability.exempt",
      objectType: "DispatchAttempt",
      objectId: attempt.id,
      repositoryId: run.repositoryId,
      detail: { runId: run.id, policyDecisionId, rule, digest: current.digest, capabilities: caps.map((c) => `${c.kind}:${c.name}`) },
    });
    return { kind: "launch", approvalId: null, exception };
  }

  const launch: PresentedLaunch = { attemptId: attempt.id, attemptNumber: attempt.number, digest: current.digest, record: current.record };
  const r = current.record;
  const presented = {
    ...presentedOf({
      run,
      contextLabels: r.contextLabels,
      admission: {
        pool: r.pool,
        runtimeServiceAccount: r.runtimeServiceAccount.name,
        runnerServiceAccount: r.runnerServiceAccount.name,
        secretsGranted: r.secrets.map((s) => s.name),
        secretsDenied: [],
        configMapsGranted: r.configMaps,
        configMapsDenied: [],
      },
      action: "privileged_capability",
      target: {},
      artifact: null,
      message: null,
      reason: `${reason} It would launch with ${named}.`,
      exception: null,
    }),
    launch,
  };
  const expiresAt = new Date(now.getTime() + defaultApprovalTtlMs);
  const approval = await tx.approvalRequest.create({
    data: { runId: run.id, action: "privileged_capability", presented: presented as Prisma.InputJsonValue, status: "pending", policyDecisionId, expiresAt, createdAt: now },
  });
  const held = `attempt ${attempt.number} would launch with ${named}; it waits for a person's approval (${approval.id})`;
  await transitionRun(tx, {
    runId: run.id,
    from: "queued",
    to: "awaiting_approval",
    reason: held,
    now,
    attemptId: attempt.id,
    before: opts.events.splice(0),
    after: [{ type: "approval_requested", payload: { approvalId: approval.id, action: "privileged_capability", target: {}, reason: presented.reason.slice(0, 2000), expiresAt: expiresAt.toISOString() } }],
  });
  return { kind: "held", approvalId: approval.id, reason: held };
}

type LockedPrivilegedApproval = {
  id: string;
  runId: string;
  status: "pending";
  presented: Prisma.JsonValue;
  run: LaunchSource & { repositoryId: string };
};

function launchOf(approval: { presented: Prisma.JsonValue }): PresentedLaunch {
  const parsed = zPresentedLaunch.safeParse((approval.presented as { launch?: unknown } | null)?.launch);
  if (!parsed.success) throw new AppError("UNPROCESSABLE", "This approval does not name what it would launch; it cannot be approved.", { reason: "invalid_presented" });
  return parsed.data;
}

/**
 * Approves a pending privileged_capability request (the caller checked the decider and holds the
 * approval's lock). What the attempt would launch with is rebuilt from the run as it is now and
 * its stored admission: a different digest refuses the approval as stale, withdraws it and
 * re-admits the run (a new request follows). Otherwise: approved, the run re-queued and its
 * dispatch enqueued; the claim re-checks the grants and launches.
 */
export async function approvePrivileged(tx: Tx, opts: { approval: LockedPrivilegedApproval; actor: UserActor; now: Date }): Promise<{ refused: AppError } | { approvalId: string; writeBackId: null }> {
  const { approval, now } = opts;
  const actor = auditActorOf(opts.actor);
  const launch = launchOf(approval);
  const run = await lockRun(tx, approval.runId, { admission: true });
  if (!run || run.status !== "awaiting_approval") {
    throw new AppError("CONFLICT", `The run is ${run?.status.replaceAll("_", " ") ?? "gone"}; its privileged capabilities are no longer waiting.`, { reason: "illegal_transition" });
  }
  const decision = admissionFor(run.admission, launch.attemptId);
  const current = decision ? await currentLaunch(tx, approval.run, decision) : null;
  if (!current || current.digest !== launch.digest) {
    const why = `stale: ${current ? launchChanges(launch.record, current.record).join(", ") : "its admission"} changed since it was requested`;
    await transitionApproval(tx, { approval, to: "expired", data: { decidedAt: now, decidedById: opts.actor.id, reason: why } });
    await requeue(tx, { runId: approval.runId, reason: `approval ${approval.id} went ${why}; the attempt is admitted again`, now, clearAdmission: true });
    await recordAudit(tx, { actor, action: "approval.stale", objectType: "ApprovalRequest", objectId: approval.id, repositoryId: approval.run.repositoryId, detail: { why, digest: launch.digest } });
    return { refused: new AppError("PRECONDITION_FAILED", `This approval is ${why}. It cannot launch; the run is admitted again and asks anew.`, { reason: "stale" }) };
  }
  await transitionApproval(tx, { approval, to: "approved", data: { decidedById: opts.actor.id, decidedAt: now } });
  await requeue(tx, { runId: approval.runId, reason: `${actor.label} approved its privileged capabilities (${approval.id}); attempt ${launch.attemptNumber} launches with exactly them`, now, clearAdmission: false });
  await recordAudit(tx, { actor, action: "approval.approve", objectType: "ApprovalRequest", objectId: approval.id, repositoryId: approval.run.repositoryId, detail: { runId: approval.runId, action: "privileged_capability", digest: launch.digest, attemptId: launch.attemptId } });
  return { approvalId: approval.id, writeBackId: null };
}

async function requeue(tx: Tx, opts: { runId: string; reason: string; now: Date; clearAdmission: boolean }) {
  await transitionRun(tx, { runId: opts.runId, from: "awaiting_approval", to: "queued", reason: opts.reason, now: opts.now });
  if (opts.clearAdmission) await tx.$executeRaw`UPDATE "AgentDispatchRun" SET "admission" = NULL WHERE "id" = ${opts.runId}`;
  await enqueueDispatch(tx, opts.runId);
}

/** After a rejection (already recorded): the attempt never launches and the run ends, with the reason. */
export async function endRejectedLaunch(tx: Tx, opts: { approval: { id: string; runId: string; presented: Prisma.JsonValue }; by: string; reason: string; now: Date }): Promise<void> {
  const launch = launchOf(opts.approval);
  const run = await lockRun(tx, opts.approval.runId);
  if (!run || run.status !== "awaiting_approval") return;
  const why = `${opts.by} rejected its privileged capabilities: ${opts.reason}`;
  const events: RunEventInput[] = [];
  const attempt = await tx.dispatchAttempt.findFirst({ where: { id: launch.attemptId, runId: opts.approval.runId, status: "queued" }, select: { id: true, number: true, status: true } });
  if (attempt) await transitionAttempt(tx, { runId: opts.approval.runId, attempt, to: "failed", reason: why, now: opts.now, events });
  await transitionRun(tx, { runId: opts.approval.runId, from: "awaiting_approval", to: "failed", reason: why, now: opts.now, attemptId: attempt?.id, before: events });
}

/** Marks the approval that let this attempt launch as executed (the claim's transaction, after the slot is taken). */
export async function markLaunched(tx: Tx, opts: { approvalId: string; runId: string; attemptNumber: number; now: Date }) {
  await transitionApproval(tx, {
    approval: { id: opts.approvalId, runId: opts.runId, status: "approved" },
    to: "executed",
    data: { reason: `attempt ${opts.attemptNumber} launched with exactly what was approved` },
  });
}

