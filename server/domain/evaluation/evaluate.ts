// Evaluation of one recorded delivery ("delivery.evaluate"): the normalised event, Airlock's
// facts about it, the trigger rules, and for each candidate a run or a recorded drop. Reading and
// context assembly happen first; every write (CI records, runs, their events and jobs, drops,
// cancels, the delivery's outcome) then commits in one transaction, so a crash leaves either
// nothing or everything, and the retry finds the delivery processed or starts clean.
import type { Db, Repository } from "@/server/db";
import { transaction } from "@/server/db";
import type { DeliveryOutcome } from "@/server/db/generated/enums";
import { attributionBeforeEvaluation, fixLoopOnEvent } from "@/server/domain/fixloop/triggers";
import { matchTriggers } from "@/server/domain/triggers/matcher";
import { describeTriage, holdCandidates, linkTriageToRun, triageFailedCheck } from "@/server/domain/triage/triage";
import { isAppError } from "@/server/errors";
import type { CiEvent } from "@/server/domain/ci-events/ci-event";
import { boundedDetail, sanitizePayload } from "@/server/domain/ingest/delivery/store";
import { loadKnownSecrets } from "@/server/domain/ingest/known-secrets";
import { lookUpChangedFiles, type ChangedFilesLookup } from "./changed-files";
import { commitCandidate, prepareRun, type CommitOutcome, type PreparedRun } from "./dispatch";
import { loadFacts, resolveAirlockActor } from "./facts";
import { applyCancelCommand, noteOnLatestLiveRun } from "./pr-requests";
import { writeRecords } from "./records";
import { repositoryNameOf, resolveDelivery } from "@/server/domain/ingest/stored-delivery";

export type EvaluationResult = {
  deliveryId: string;
  /** "skipped": already processed (a retry); "missing": no such delivery. */
  outcome: DeliveryOutcome | "skipped" | "missing";
  detail: string;
  created: { runId: string; number: number; status: string }[];
  duplicates: { runId: string; number: number }[];
  refused: string[];
  cancelled: number[];
};

const result = (deliveryId: string, outcome: EvaluationResult["outcome"], detail: string): EvaluationResult => ({
  deliveryId,
  outcome,
  detail,
  created: [],
  duplicates: [],
  refused: [],
  cancelled: [],
});

export async function evaluateDelivery(opts: {
  db: Db;
  deliveryId: string;
  now?: Date;
  /** Reads a GitHub PR's changed files for path-filtered rules; absent: they stay unknown. */
  changedFiles?: ChangedFilesLookup | null;
}): Promise<EvaluationResult> {
  const { db, deliveryId } = opts;
  const now = opts.now ?? new Date();
  const delivery = await db.webhookDelivery.findUnique({
    where: { deliveryId },
    select: { source: true, event: true, payload: true, processedAt: true },
  });
  if (!delivery) return result(deliveryId, "missing", "no such delivery");
  if (delivery.processedAt) return result(deliveryId, "skipped", "already processed");
  try {
    return await evaluateStored({ db, deliveryId, delivery, now, changedFiles: opts.changedFiles ?? null });
  } catch (err) {
    // A delivery that can never evaluate (malformed, invalid stored event) is marked failed
    // with the reason; anything else (database down) is thrown so the job is retried.
    if (!isAppError(err) || err.status >= 500) throw err;
    const secrets = await loadKnownSecrets(db, now);
    const detail = boundedDetail(sanitizePayload(err.message, secrets));
    await finish(db, deliveryId, "failed", detail, now);
    return result(deliveryId, "failed", detail);
  }
}

type StoredRow = { source: "local" | "github"; event: string; payload: unknown };

async function evaluateStored(opts: { db: Db; deliveryId: string; delivery: StoredRow; now: Date; changedFiles: ChangedFilesLookup | null }): Promise<EvaluationResult> {
  const { db, deliveryId, delivery, now } = opts;
  const name = repositoryNameOf(delivery);
  const repository = name ? await findRepository(db, name) : null;
  if (!repository) {
    const detail = `repository ${name ?? "(none)"} is not registered in Airlock`;
    await finish(db, deliveryId, "ignored", detail, now);
    return result(deliveryId, "ignored", detail);
  }
  const resolved = resolveDelivery(delivery, repository.botHandle);
  let event: CiEvent = resolved.event;
  const secrets = await loadKnownSecrets(db, now);
  if (event.type === "ignored") {
    const detail = boundedDetail(sanitizePayload(event.reason, secrets));
    await finish(db, deliveryId, "ignored", detail, now);
    return result(deliveryId, "ignored", detail);
  }
  // Only a person's request is decided by who asked (a failed check or a release is not).
  const asks = event.type === "pr_comment" || event.type === "pr_labeled" || event.type === "manual";
  const airlockActor = asks ? await resolveAirlockActor(db, repository.id, resolved.githubUserId) : null;
  if (airlockActor?.role) event = { ...event, actor: { ...event.actor, airlockRole: airlockActor.role } };
  const dispatchable = event;

  const facts = await loadFacts({ db, repository, event: dispatchable, extras: resolved.extras });
  const rules = await db.triggerRule.findMany({
    where: { enabled: true, OR: [{ repositoryId: null }, { repositoryId: repository.id }] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const filesNote = await lookUpChangedFiles({ repository, event: dispatchable, facts, rules, lookup: opts.changedFiles });
  const match = matchTriggers({
    event: dispatchable,
    rules,
    repository: {
      id: repository.id,
      fullName: repository.fullName,
      autoRunOnFailedCheck: repository.autoRunOnFailedCheck,
      dispatchLabel: repository.dispatchLabel,
    },
    facts: {
      changedFiles: facts.changedFiles,
      failureSignature: facts.failure?.signature ?? null,
      pullRequestNumber: facts.pullRequestNumber,
      headSha: facts.headSha,
      headBranch: facts.headBranch,
      ...(resolved.extras.artifacts.length > 0 ? { artifactDigests: facts.artifacts.flatMap((a) => (a.digest ? [a.digest] : [])) } : {}),
    },
  });
  // One order for every evaluation: advisory locks on dedupe keys never deadlock.
  const candidates = [...match.candidates].sort((a, b) => (a.dedupeKey < b.dedupeKey ? -1 : a.dedupeKey > b.dedupeKey ? 1 : 0));

  // Build contexts only for keys no run holds yet (a redelivery storm builds none).
  const taken = new Set(
    candidates.length === 0
      ? []
      : (await db.agentDispatchRun.findMany({ where: { dedupeKey: { in: candidates.map((c) => c.dedupeKey) } }, select: { dedupeKey: true } })).map(
          (r) => r.dedupeKey,
        ),
  );
  // A red check on a branch our agents touched: its runs carry whose failure it is (stored in the transaction).
  const attribution = await attributionBeforeEvaluation(db, { event: dispatchable, repositoryId: repository.id, prHeadRef: facts.pullRequest?.headRef, now });
  const base = {
    event: dispatchable,
    repository,
    facts,
    actorUserId: airlockActor?.userId ?? null,
    deliveryId,
    eventName: delivery.event,
    secrets,
    attribution: attribution ? [attribution.entry] : undefined,
  };
  const prepared = new Map<string, PreparedRun>();
  for (const candidate of candidates) {
    if (!taken.has(candidate.dedupeKey)) prepared.set(candidate.dedupeKey, await prepareRun({ ...base, db, candidate }));
  }

  // Under a redelivery storm, evaluations of one failure queue on its pipeline's lock and on the
  // pool's connections: wait for them rather than fail and retry the job later.
  return transaction(db, "evaluateDelivery", async (tx) => {
    const [row] = await tx.$queryRaw<{ processedAt: Date | null }[]>`
      SELECT "processedAt" FROM "WebhookDelivery" WHERE "deliveryId" = ${deliveryId} FOR UPDATE`;
    if (!row || row.processedAt) return result(deliveryId, "skipped", "already processed");

    const records = await writeRecords({ tx, repository, event: dispatchable, facts, now });
    // CI triage decides what happens to a failed check; "rerun once" holds the agents back.
    const triage = dispatchable.type === "failed_check" ? await triageFailedCheck({ tx, repository, event: dispatchable, records, now }) : null;
    if (triage?.holdsAgents) await holdCandidates(tx, triage, candidates, deliveryId);
    const outcomes: { ruleName: string; outcome: CommitOutcome }[] = [];
    for (const candidate of triage?.holdsAgents ? [] : candidates) {
      const outcome = await commitCandidate({
        tx,
        candidate,
        deliveryId,
        records,
        prepare: async () => prepared.get(candidate.dedupeKey) ?? prepareRun({ ...base, db: tx, candidate }),
      });
      outcomes.push({ ruleName: candidate.ruleName, outcome });
    }
    const out = result(deliveryId, "processed", "");
    for (const { outcome } of outcomes) {
      if (outcome.kind === "created") out.created.push({ runId: outcome.runId, number: outcome.number, status: outcome.status });
      else if (outcome.kind === "duplicate") out.duplicates.push({ runId: outcome.runId, number: outcome.number });
      else out.refused.push(outcome.reason);
    }
    if (match.refusal !== null) {
      const reason = `refused: ${match.refusal}`;
      await tx.triggerDrop.create({ data: { reason, deliveryId } });
      if (records.pullRequestId) await noteOnLatestLiveRun(tx, records.pullRequestId, reason);
      out.refused.push(match.refusal);
    }
    if (dispatchable.type === "pr_comment" && dispatchable.command === "cancel") {
      const cancel = await applyCancelCommand({ tx, event: dispatchable, pullRequestId: records.pullRequestId, actorUserId: airlockActor?.userId ?? null, deliveryId, now });
      out.cancelled = cancel.cancelled;
      if (cancel.refused) out.refused.push(cancel.refused);
    }
    await linkTriageToRun(tx, triage, out.created.map((r) => r.runId));
    const allDuplicates = outcomes.length > 0 && outcomes.every((o) => o.outcome.kind === "duplicate");
    out.outcome = allDuplicates ? "duplicate" : "processed";
    const loopNote = await fixLoopOnEvent(tx, { event: dispatchable, repositoryId: repository.id, pullRequestId: records.pullRequestId, createdRunIds: out.created.map((c) => c.runId), attribution, now });
    const triaged = describeTriage(triage);
    const described = describe(dispatchable, outcomes, out, triage?.holdsAgents ? [] : match.skipped, triage?.holdsAgents === true);
    out.detail = boundedDetail(sanitizePayload([triaged, described, filesNote, loopNote].filter(Boolean).join("; "), secrets));
    await tx.webhookDelivery.update({ where: { deliveryId }, data: { outcome: out.outcome, detail: out.detail, processedAt: now } });
    return out;
  }, { maxWait: 30_000, timeout: 30_000 });
}

async function findRepository(db: Db, fullName: string): Promise<Repository | null> {
  // GitHub owner and repository names are case-insensitive.
  return (
    (await db.repository.findUnique({ where: { fullName } })) ??
    (await db.repository.findFirst({ where: { fullName: { equals: fullName, mode: "insensitive" } } }))
  );
}

async function finish(db: Db, deliveryId: string, outcome: DeliveryOutcome, detail: string, now: Date) {
  await db.webhookDelivery.updateMany({ where: { deliveryId, processedAt: null }, data: { outcome, detail, processedAt: now } });
}

function describe(
  event: Exclude<CiEvent, { type: "ignored" }>,
  outcomes: { ruleName: string; outcome: CommitOutcome }[],
  out: EvaluationResult,
  skipped: { ruleName: string | null; reason: string }[],
  held = false,
): string {
  const parts: string[] = [];
  for (const { ruleName, outcome } of outcomes) {
    if (outcome.kind === "created") parts.push(`run #${outcome.number} ${outcome.status} (rule ${ruleName})`);
    else if (outcome.kind === "duplicate") parts.push(`duplicate of run #${outcome.number} (rule ${ruleName})`);
    else parts.push(`rule ${ruleName} not dispatched: ${outcome.reason}`);
  }
  for (const reason of out.refused.filter((r) => !parts.some((p) => p.endsWith(r)))) parts.push(reason.startsWith("cancel") ? reason : `refused: ${reason}`);
  if (out.cancelled.length > 0) parts.push(`cancelled run${out.cancelled.length === 1 ? "" : "s"} ${out.cancelled.map((n) => `#${n}`).join(", ")}`);
  if (event.type === "pr_updated") parts.push(`pull request #${event.pullRequest.number} ${event.action}: record updated`);
  if (event.type === "pr_review") parts.push(`review (${event.review.state}) on #${event.pullRequest.number} stored`);
  if (outcomes.length === 0 && out.refused.length === 0 && !held) {
    const reasons = skipped.slice(0, 3).map((s) => (s.ruleName ? `${s.ruleName}: ${s.reason}` : s.reason));
    if (event.type !== "pr_updated" && event.type !== "pr_review") parts.push(`no run: ${reasons.join("; ") || "no rule matched"}`);
  }
  return parts.join("; ");
}
