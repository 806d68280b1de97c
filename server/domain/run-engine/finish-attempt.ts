import type { Db } from "@/server/db";
import type { ArtifactKind, RunStatus } from "@/server/db/generated/enums";
import { appendRunEvents } from "../events/append";
import { markPassLeftEdits } from "../fixloop/observe";
import type { RunEventInput } from "../events/catalogue";
import type { KnownSecret } from "../context/redaction/redact";
import { type ArtifactToStore, describeFindings, protectArtifact } from "../runs/artifact-content";
import { type AttemptFence, withFence } from "../runs/attempt-fence";
import { retryOrEnd } from "../runs/attempts";
import type { RunForExecution } from "./claim-attempt";
import { type PatchArtifact, requestPatchWriteBack } from "./request-approval";
import { transitionAttempt, transitionRun } from "../runs/transition";

// The attempt's artifacts and its end, both fenced: a worker whose attempt was replaced cannot
// store an artifact or overwrite the outcome its successor records.

export type StoredArtifact = { id: string; kind: ArtifactKind; name: string; digest: string; sizeBytes: number };

/**
 * One Artifact row and its artifact_produced event, in one fenced transaction. The content is
 * redacted first (token shapes, `secrets`): see artifact-content.ts for what that means for a patch.
 */
export function storeAttemptArtifact(opts: { db: Db; fence: AttemptFence; artifact: ArtifactToStore; secrets: readonly KnownSecret[]; now?: Date }): Promise<StoredArtifact> {
  const artifact = protectArtifact(opts.artifact, opts.secrets);
  const now = opts.now ?? new Date();
  return withFence(opts.db, "storeAttemptArtifact", opts.fence, async (tx) => {
    const row = await tx.artifact.create({
      data: {
        runId: opts.fence.runId,
        attemptId: opts.fence.attemptId,
        kind: artifact.kind,
        name: artifact.name,
        content: artifact.content,
        location: artifact.location,
        mediaType: artifact.mediaType,
        digest: artifact.digest,
        sizeBytes: artifact.sizeBytes,
        secretFindings: artifact.secretFindings ?? undefined,
        withheldContent: artifact.withheldContent,
        retainUntil: artifact.retainUntil,
        createdAt: now,
      },
      select: { id: true, kind: true, name: true, digest: true, sizeBytes: true },
    });
    await appendRunEvents({
      db: tx,
      runId: opts.fence.runId,
      attemptId: opts.fence.attemptId,
      events: [
        {
          type: "artifact_produced",
          payload: { artifactId: row.id, kind: row.kind, name: row.name, digest: row.digest, sizeBytes: row.sizeBytes, mediaType: artifact.mediaType },
        },
        ...(artifact.secretFindings
          ? [
              {
                type: "log" as const,
                payload: {
                  stream: "system" as const,
                  text: artifact.withheldContent
                    ? `Push protection: the patch ${row.name} contains secrets (${describeFindings(artifact.secretFindings)}). It is shown redacted; its push is refused unless an admin overrides with a reason.`
                    : `Masked in ${row.name}: ${describeFindings(artifact.secretFindings)}.`,
                },
              },
            ]
          : []),
      ],
    });
    return row;
  });
}

export type AttemptEnd = { status: "succeeded" | "failed" | "cancelled" | "timed_out"; reason: string };

/**
 * Records how the attempt ended and moves the run on: a succeeded attempt with a patch asks the
 * change gate for its write-back (an ApprovalRequest, or an exempt write-back queued), a
 * succeeded attempt without one (a diagnosis) succeeds, a timed-out attempt is retried within the
 * stack's bound (see automaticRetry), and anything else fails or is cancelled with the attempt
 * (`runStatus` "queued" means retried).
 */
export function finishAttempt(opts: {
  db: Db;
  fence: AttemptFence;
  run: RunForExecution;
  end: AttemptEnd;
  artifacts: StoredArtifact[];
  approvalTtlMs: number;
  now?: Date;
}): Promise<{ runStatus: RunStatus; approvalIds: string[] }> {
  const now = opts.now ?? new Date();
  const { end, fence } = opts;
  return withFence(opts.db, "finishAttempt", fence, async (tx, attempt) => {
    const run = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: fence.runId }, select: { status: true } });
    const attemptEvents: RunEventInput[] = [];
    await transitionAttempt(tx, { runId: fence.runId, attempt: { id: fence.attemptId, ...attempt }, to: end.status, reason: end.reason, now, events: attemptEvents });
    if (end.status === "timed_out") {
      const outcome = await retryOrEnd(tx, {
        runId: fence.runId,
        attempt: { id: fence.attemptId, number: attempt.number },
        cause: "timed_out",
        events: attemptEvents,
        what: `timed out (${end.reason})`,
        now,
      });
      return { runStatus: outcome.retried ? "queued" : outcome.runStatus, approvalIds: [] };
    }
    await appendRunEvents({ db: tx, runId: fence.runId, attemptId: fence.attemptId, events: attemptEvents });

    const patches = opts.artifacts.filter((a): a is PatchArtifact => a.kind === "patch");
    let to: RunStatus;
    let why: string;
    const approvalIds: string[] = [];
    // Any patch written counts as edits left, even one whose push is later rejected.
    if (patches.length > 0) await markPassLeftEdits(tx, fence.attemptId);
    if (end.status === "succeeded" && patches.length > 0) {
      let exempt = 0;
      for (const patch of patches) {
        const asked = await requestPatchWriteBack(tx, { run: opts.run, attemptId: fence.attemptId, artifact: patch, ttlMs: opts.approvalTtlMs, now });
        if (asked.kind === "approval") approvalIds.push(asked.approvalId);
        else exempt++;
      }
      // The run stays open (awaiting_approval) until its write-backs settle, exempt ones included.
      to = "awaiting_approval";
      const what = patches.length === 1 ? "a patch" : `${patches.length} patches`;
      why =
        exempt === 0
          ? `attempt ${attempt.number} produced ${what}; pushing needs approval`
          : exempt === patches.length
            ? `attempt ${attempt.number} produced ${what}; a repository exception lets ${patches.length === 1 ? "it" : "them"} be pushed without approval`
            : `attempt ${attempt.number} produced ${what}; ${exempt} pushed under a repository exception, the rest need approval`;
    } else if (end.status === "succeeded") {
      to = "succeeded";
      why = `attempt ${attempt.number} finished with nothing left to approve`;
    } else if (end.status === "cancelled") {
      to = "cancelled";
      why = `attempt ${attempt.number} was cancelled: ${end.reason}`;
    } else {
      to = "failed";
      why = `attempt ${attempt.number} failed: ${end.reason}; not retried: the agent itself failed`;
    }
    await transitionRun(tx, { runId: fence.runId, from: run.status, to, reason: why, now, attemptId: fence.attemptId });
    return { runStatus: to, approvalIds };
  });
}

/**
 * Cost events carry the attempt's cumulative totals: store them, and the run's sum over attempts.
 * Dollars the meter could not know (a model without a price) leave the figure as it was and say
 * which model, on the attempt and the run, so a missing price never reads as $0.
 */
export async function recordAttemptCost(
  tx: Parameters<Parameters<typeof withFence>[3]>[0],
  fence: AttemptFence,
  cost: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number; usd?: number; unpricedModel?: string },
) {
  const inputTokens = cost.inputTokens + (cost.cacheReadTokens ?? 0) + (cost.cacheWriteTokens ?? 0);
  const dollars = cost.usd !== undefined ? { costUsd: cost.usd.toFixed(6), costUnknown: null } : cost.unpricedModel !== undefined ? { costUnknown: cost.unpricedModel } : {};
  await tx.dispatchAttempt.update({
    where: { id: fence.attemptId },
    data: { inputTokens, outputTokens: cost.outputTokens, ...dollars },
  });
  await tx.$executeRaw`
    UPDATE "AgentDispatchRun" r SET
      "inputTokens" = s."inputTokens", "outputTokens" = s."outputTokens", "costUsd" = s."costUsd", "costUnknown" = s."costUnknown"
    FROM (SELECT coalesce(sum("inputTokens"), 0)::int AS "inputTokens", coalesce(sum("outputTokens"), 0)::int AS "outputTokens",
                 coalesce(sum("costUsd"), 0) AS "costUsd", string_agg(DISTINCT "costUnknown", ', ') AS "costUnknown"
          FROM "DispatchAttempt" WHERE "runId" = ${fence.runId}) s
    WHERE r."id" = ${fence.runId}`;
}
