import { randomUUID } from "node:crypto";
import type { Prisma, Tx } from "@/server/db";
import type { RunCause, RunSource } from "@/server/db/generated/enums";
import { promptHash } from "../context/prompt";
import { appendRunEvents } from "../events/append";
import type { AuditActor } from "../audit";
import { contentDigest, digestOf } from "@/server/lib/digest";
import { enqueueDispatch } from "./attempts";
import { queueAttempt } from "./transition";
import { inheritCausers, recordCauser } from "./causers";

// A new run whose parent is an existing one (resume, fork): same repository, commit, pull
// request, pipeline and job; its own prompt and, for a fork, possibly another stack's snapshot.
// The bundle's `source` names the parent, so the bundle (and its digest) says how the run came
// about. Created queued with its first attempt and dispatch job. It inherits its parent's
// causers (server/domain/runs/causers.ts) and adds its own.

export type ParentRun = Prisma.AgentDispatchRunGetPayload<{ select: typeof parentSelect }>;

export const parentSelect = {
  id: true,
  number: true,
  title: true,
  status: true,
  repositoryId: true,
  pullRequestId: true,
  pipelineId: true,
  jobId: true,
  taskKind: true,
  triggerRuleId: true,
  actorUserId: true,
  headSha: true,
  headBranch: true,
  isFork: true,
  origin: true,
  originReason: true,
  stackId: true,
  stackVersion: true,
  stackSnapshot: true,
  stackDigest: true,
  contextBundle: true,
  prompt: true,
} satisfies Prisma.AgentDispatchRunSelect;

export function childBundle(parent: ParentRun, kind: RunSource, headBranch?: string): Prisma.JsonValue {
  const bundle = parent.contextBundle;
  if (!bundle || typeof bundle !== "object" || Array.isArray(bundle)) return bundle;
  const source = bundle.source;
  if (!source || typeof source !== "object" || Array.isArray(source)) return bundle;
  const ref = bundle.ref;
  const onBranch = headBranch && ref && typeof ref === "object" && !Array.isArray(ref) ? { ref: { ...ref, branch: headBranch } } : {};
  return { ...bundle, ...onBranch, source: { ...source, kind, via: "ui", parentRunId: parent.id, triggerRuleId: null, triggerRuleName: null, deliveryId: null } };
}

export async function createChildRun(
  tx: Tx,
  opts: {
    parent: ParentRun;
    /** "review": a fix run started by a rejection (the fix-forward loop). */
    source: "resume" | "fork" | "review";
    actor: AuditActor;
    /** How the actor caused the child (recorded among its causers with the parent's). */
    cause: RunCause;
    /** Other people whose words the child carries (a fix run: the rejecter). */
    causers?: { userId: string; cause: RunCause }[];
    prompt: string;
    title: string;
    stack?: { id: string; version: number; snapshot: Prisma.JsonValue; digest: string };
    /** The commit to start from when the branch moved since the parent (default: the parent's). */
    headSha?: string;
    /** Another branch to work on (default: the parent's); the bundle's ref names it. It must exist at headSha. */
    headBranch?: string;
    /** The status event's reason (default: "<actor> resumed/forked run #N"). */
    reason?: string;
    /** Automation acting for the parent's rule (a fix run): admission reads it as its authority. */
    triggerRuleId?: string | null;
    /** Sections added to the bundle (e.g. the fix-forward loop's red-check attribution). */
    bundleExtras?: Record<string, Prisma.InputJsonValue>;
    now: Date;
  },
) {
  const { parent, now } = opts;
  const base = childBundle(parent, opts.source, opts.headBranch);
  const bundle = opts.bundleExtras && base && typeof base === "object" && !Array.isArray(base) ? ({ ...base, ...opts.bundleExtras } as Prisma.JsonValue) : base;
  const contextDigest = digestOf(bundle);
  const hash = promptHash(opts.prompt);
  const run = await tx.agentDispatchRun.create({
    data: {
      title: opts.title.slice(0, 300),
      repositoryId: parent.repositoryId,
      pullRequestId: parent.pullRequestId,
      pipelineId: parent.pipelineId,
      jobId: parent.jobId,
      source: opts.source,
      taskKind: parent.taskKind,
      triggerRuleId: opts.triggerRuleId ?? null,
      actor: opts.actor.label,
      actorUserId: opts.actor.userId,
      status: "queued",
      headSha: opts.headSha ?? parent.headSha,
      headBranch: opts.headBranch ?? parent.headBranch,
      isFork: parent.isFork,
      origin: parent.origin,
      originReason: parent.originReason,
      stackId: opts.stack?.id ?? parent.stackId,
      stackVersion: opts.stack?.version ?? parent.stackVersion,
      stackSnapshot: (opts.stack?.snapshot ?? parent.stackSnapshot) as Prisma.InputJsonValue,
      stackDigest: opts.stack?.digest ?? parent.stackDigest,
      contextBundle: bundle as Prisma.InputJsonValue,
      contextDigest,
      prompt: opts.prompt,
      promptHash: hash,
      dedupeKey: `${opts.source}:${parent.id}:${randomUUID()}`,
      parentRunId: parent.id,
      createdAt: now,
    },
    select: { id: true, number: true },
  });
  const labels = bundle && typeof bundle === "object" && !Array.isArray(bundle) ? Object.keys(bundle).filter((k) => bundle[k] !== null) : [];
  await appendRunEvents({
    db: tx,
    runId: run.id,
    events: [
      {
        type: "context_assembled",
        payload: { digest: contextDigest, promptHash: hash, sizeBytes: Buffer.byteLength(JSON.stringify(bundle)), labels: labels.slice(0, 200), redactions: 0, truncated: false },
      },
      {
        type: "status",
        payload: { scope: "run", from: null, to: "queued", reason: opts.reason ?? `${opts.actor.label} ${opts.source === "resume" ? "resumed" : "forked"} run #${parent.number}` },
      },
    ],
  });
  await inheritCausers(tx, { parent, childRunId: run.id });
  await recordCauser(tx, { runId: run.id, userId: opts.actor.userId, cause: opts.cause });
  for (const c of opts.causers ?? []) await recordCauser(tx, { runId: run.id, userId: c.userId, cause: c.cause });
  await queueAttempt(tx, { runId: run.id, reason: "the run was queued", now });
  await enqueueDispatch(tx, run.id);
  return { ...run, contextDigest, promptHash: hash, promptDigest: contentDigest(opts.prompt) };
}
