// One candidate run: prepared outside the transaction (stack snapshot, context bundle, prompt),
// then committed inside it under the dedupe key's advisory lock: a new run with its events (and
// its "run.dispatch" job when it is queued), or a TriggerDrop that names the run it duplicates.
import type { Db, Prisma, Repository, Tx } from "@/server/db";
import { assembleCandidate } from "./assemble-candidate";
import type { BundleAttribution } from "@/server/domain/context/context-bundle";
import type { KnownSecret } from "@/server/domain/context/redaction/redact";
import { appendRunEvents } from "@/server/domain/events/append";
import { zStackSpec } from "@/server/domain/stacks/spec";
import type { Candidate } from "@/server/domain/triggers/matcher";
import type { Firing, Precedence, Superseded } from "@/server/domain/triggers/precedence";
import { isAppError } from "@/server/errors";
import { enqueue } from "@/server/queue/enqueue";
import { decideActorPermission, type PermissionDecision } from "@/server/domain/triggers/actor-permission";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import type { Facts } from "./facts";
import { advisoryLock } from "@/server/db/advisory-lock";
import { requestReleaseGapApprovals } from "@/server/domain/approvals/release-gaps";
import type { DropLedger } from "./drops";
import { dedupeLockKey } from "./locks";
import { runTitle } from "./titles";

export type PreparedRun =
  | { kind: "refused"; reason: string }
  | {
      kind: "run";
      data: Omit<Prisma.AgentDispatchRunUncheckedCreateInput, "pullRequestId" | "pipelineId" | "jobId">;
      context: { digest: string; promptHash: string; sizeBytes: number; labels: string[]; redactions: number; truncated: boolean };
    };

export type PrepareArgs = {
  db: Db;
  event: DispatchableEvent;
  candidate: Candidate;
  repository: Repository;
  facts: Facts;
  actorUserId: string | null;
  deliveryId: string;
  eventName: string;
  secrets: readonly KnownSecret[];
  /** Computed before the transaction from stored observations (fixloop prepareAttribution). */
  attribution?: BundleAttribution[];
};

export async function prepareRun(args: PrepareArgs): Promise<PreparedRun> {
  const { candidate, facts } = args;
  const stack = await args.db.agentStack.findUnique({
    where: { id: candidate.stackId },
    select: { id: true, name: true, version: true, archivedAt: true },
  });
  // The stack's current version: a run snapshots what the stack is now.
  const version = stack ? await stackVersion(args.db, stack.id, stack.version) : null;
  if (!stack || !version) return { kind: "refused", reason: `stack ${candidate.stackId} of rule ${candidate.ruleName} does not exist` };
  if (stack.archivedAt) return { kind: "refused", reason: `stack ${stack.name} is archived` };
  const spec = version.spec;
  if (!spec.success) return { kind: "refused", reason: `stack ${stack.name} v${version.version} is not a valid stack definition` };
  if (facts.headSha === null) return { kind: "refused", reason: "the head commit is unknown" };

  let assembled: ReturnType<typeof assembleCandidate>;
  try {
    // The same call the stack editor's preview makes: a preview shows exactly what a run gets.
    assembled = assembleCandidate({
      ...args,
      permission: permissionFor(args.event),
      stack: { id: stack.id, name: stack.name, version: version.version, spec: spec.data },
      secrets: args.secrets,
    });
  } catch (err) {
    // A broken template or bundle is the stack's problem: refuse this run, keep the delivery.
    if (isAppError(err) && err.status < 500) return { kind: "refused", reason: `stack ${stack.name} v${version.version}: ${err.message}` };
    throw err;
  }
  const { context: built, prompt } = assembled;
  const queued = candidate.action === "auto_run";
  return {
    kind: "run",
    data: {
      title: runTitle({ event: args.event, candidate, facts }),
      repositoryId: args.repository.id,
      source: candidate.source,
      taskKind: candidate.taskKind,
      triggerRuleId: candidate.ruleId,
      actor: args.event.actor.login,
      actorUserId: args.actorUserId,
      status: queued ? "queued" : "suggested",
      headSha: facts.headSha,
      headBranch: facts.headBranch,
      // Only the repository's own code is trusted: a fork or an unknown origin stays on an
      // untrusted pool (admission reads isFork), and the run says which and why.
      isFork: facts.origin.kind !== "repository",
      origin: facts.origin.kind,
      originReason: facts.origin.reason.slice(0, 500),
      stackId: stack.id,
      stackVersion: version.version,
      stackSnapshot: assembled.snapshot as Prisma.InputJsonValue,
      stackDigest: assembled.stackDigest,
      contextBundle: built.bundle as Prisma.InputJsonValue,
      contextDigest: built.digest,
      prompt: prompt.prompt,
      promptHash: prompt.promptHash,
      dedupeKey: candidate.dedupeKey,
    },
    context: {
      digest: built.digest,
      promptHash: prompt.promptHash,
      sizeBytes: Buffer.byteLength(built.canonical),
      labels: built.bundle.contextLabels.map((l) => l.name),
      redactions: built.bundle.redaction.entries.reduce((n, e) => n + e.count, 0),
      truncated: built.bundle.logs.some((l) => l.truncated),
    },
  };
}

// Stack versions are append-only (an edit is a new version), so a parsed version can be reused
// for every run of it; a small cache keeps one query and a parse off each evaluation.
const versionCache = new Map<string, { version: number; spec: ReturnType<typeof zStackSpec.safeParse> }>();

async function stackVersion(db: Db, stackId: string, version: number) {
  const key = `${stackId}@${version}`;
  const hit = versionCache.get(key);
  if (hit) return hit;
  const row = await db.agentStackVersion.findUnique({ where: { stackId_version: { stackId, version } }, select: { version: true, spec: true } });
  if (!row) return null;
  const entry = { version: row.version, spec: zStackSpec.safeParse(row.spec) };
  if (versionCache.size >= 200) versionCache.delete(versionCache.keys().next().value ?? "");
  versionCache.set(key, entry);
  return entry;
}

export type CommitOutcome =
  | { kind: "created"; runId: string; number: number; status: string }
  | { kind: "duplicate"; runId: string; number: number }
  | { kind: "refused"; reason: string };

export type CommitArgs = {
  tx: Tx;
  candidate: Firing;
  deliveryId: string;
  /** Where the delivery's drops are written (once each, across re-evaluations). */
  drops: DropLedger;
  /** Called when no run holds the key: prepared before the transaction, or now (rare). */
  prepare: () => Promise<PreparedRun>;
  records: { pullRequestId: string | null; pipelineId: string | null; jobId: string | null };
  /** The evaluation's clock (a release's gap approvals are made at it). */
  now?: Date;
};

export async function commitCandidate(args: CommitArgs): Promise<CommitOutcome> {
  const { tx, candidate } = args;
  await advisoryLock(tx, dedupeLockKey(candidate.dedupeKey));
  const existing = await tx.agentDispatchRun.findUnique({ where: { dedupeKey: candidate.dedupeKey }, select: { id: true, number: true } });
  if (existing) {
    // A re-evaluated delivery meets the run it created itself: that is no duplicate trigger.
    if (await args.drops.createdRun(existing.id)) return { kind: "duplicate", runId: existing.id, number: existing.number };
    const reason = `duplicate trigger: run #${existing.number} already exists for this dedupe key`;
    const written = await args.drops.record("duplicate", [{ dedupeKey: candidate.dedupeKey, reason, ruleId: candidate.ruleId, runId: existing.id }]);
    if (written > 0) await appendRunEvents({
      db: tx,
      runId: existing.id,
      events: [{ type: "dispatch_skipped", payload: { reason, dedupeKey: candidate.dedupeKey, ruleId: candidate.ruleId, existingRunId: existing.id } }],
    });
    return { kind: "duplicate", runId: existing.id, number: existing.number };
  }
  const prepared = await args.prepare();
  if (prepared.kind === "refused") {
    await args.drops.record("refused", [{ dedupeKey: candidate.dedupeKey, reason: `not dispatched: ${prepared.reason}`, ruleId: candidate.ruleId }]);
    return prepared;
  }
  const run = await tx.agentDispatchRun.create({
    data: { ...prepared.data, ...args.records },
    select: { id: true, number: true, status: true },
  });
  await appendRunEvents({
    db: tx,
    runId: run.id,
    events: [
      {
        type: "trigger_matched",
        payload: {
          ruleId: candidate.ruleId,
          ruleName: candidate.ruleName.slice(0, 300),
          triggerKind: candidate.triggerKind,
          dedupeKey: candidate.dedupeKey.slice(0, 500),
          deliveryId: args.deliveryId,
          ...(candidate.keyVerdicts.length > 0 ? { keys: candidate.keyVerdicts.map((v) => ({ ...v, detail: v.detail.slice(0, 1000) })) } : {}),
          ...(candidate.gaps.length > 0 ? { gaps: candidate.gaps.map((g) => ({ id: g.id, detail: g.detail })) } : {}),
          // Why this rule fired when others matched the same failure (triggers/precedence.ts).
          ...(candidate.precedence ? { precedence: boundedPrecedence(candidate.precedence) } : {}),
        },
      },
      { type: "context_assembled", payload: prepared.context },
      { type: "status", payload: { scope: "run", from: null, to: run.status, reason: candidate.reason.slice(0, 2000) } },
    ],
  });
  if (candidate.releaseRef && candidate.gaps.length > 0) {
    // Each readiness gap is a person's to accept before the release is published.
    const gapRun = await tx.agentDispatchRun.findUniqueOrThrow({
      where: { id: run.id },
      select: { id: true, prompt: true, promptHash: true, contextDigest: true, contextBundle: true, stackSnapshot: true, stackDigest: true, headSha: true, repository: { select: { fullName: true } } },
    });
    await requestReleaseGapApprovals(tx, { run: gapRun, gaps: candidate.gaps, ...candidate.releaseRef, ruleName: candidate.ruleName, now: args.now ?? new Date() });
  }
  if (run.status === "queued") await enqueue(tx, "run.dispatch", { runId: run.id });
  return { kind: "created", runId: run.id, number: run.number, status: run.status };
}

function boundedPrecedence(p: Precedence) {
  return {
    why: p.why.slice(0, 2000),
    competitors: p.competitors.slice(0, 50).map((c) => ({ ...c, ruleName: c.ruleName.slice(0, 300) })),
  };
}

/** Drops for the candidates precedence superseded, linked to the run their winner made or hit. */
export async function recordSuperseded(drops: DropLedger, superseded: readonly Superseded[], winners: ReadonlyMap<string, string | null>): Promise<void> {
  if (superseded.length === 0) return;
  await drops.record(
    "superseded",
    superseded.map((s) => ({ dedupeKey: s.candidate.dedupeKey, ruleId: s.candidate.ruleId, runId: winners.get(s.by.dedupeKey) ?? null, reason: s.why.slice(0, 2000) })),
  );
}

/** The permission decision the bundle records: comments and labels are people asking. */
export function permissionFor(event: DispatchableEvent): PermissionDecision {
  const via =
    event.type === "pr_comment" ? "comment" : event.type === "pr_labeled" ? "label" : event.type === "manual" ? "manual" : null;
  if (via === null) {
    return { allowed: true, reason: `${event.type.replace("_", " ")}: started by a trigger rule, not by a person's request` };
  }
  return decideActorPermission({
    association: event.actor.association,
    airlockRole: event.actor.airlockRole,
    isBot: event.actor.type === "bot",
    via,
  });
}
