// Evaluation of one recorded delivery ("delivery.evaluate"): load the event and Airlock's facts
// (load.ts), plan which rules fire (plan.ts, the function the dry run shows), then for each
// firing candidate a run or a recorded drop. Reading and context assembly happen first; every
// write (CI records, runs, their events and jobs, drops, cancels, the delivery's outcome) then
// commits in one transaction, so a crash leaves either nothing or everything, and the retry finds
// the delivery processed or starts clean. A delivery no rule can act on is decided before any of
// that (prefilter.ts): screened, planned without facts, and recorded in one statement.
import type { Db } from "@/server/db";
import { transaction } from "@/server/db";
import { ForgeKind, type DeliveryOutcome } from "@/server/db/generated/enums";
import { z } from "zod";
import { attributionBeforeEvaluation, fixLoopOnEvent } from "@/server/domain/fixloop/triggers";
import { boundedDetail, sanitizePayload } from "@/server/domain/ingest/delivery/store";
import { loadKnownSecrets } from "@/server/domain/ingest/known-secrets";
import { describeTriage, linkTriageToRun, triageFailedCheck } from "@/server/domain/triage/triage";
import { lookUpChangedFiles, type ChangedFilesLookup } from "./changed-files";
import { commitCandidate, prepareRun, recordSuperseded, type CommitOutcome, type PreparedRun } from "./dispatch";
import { holdCandidates, openDropLedger } from "./drops";
import { attachJobLog, type JobLogReader } from "./job-log";
import { offerOnGithub } from "@/server/domain/check-runs/surface";
import { screenDelivery, withFacts, type DeliveryRow, type LoadedEvent, type ScreenedEvent } from "./load";
import { heldKeys, planEvaluation, type EvaluationPlan } from "./plan";
import { prefilterPlan } from "./prefilter";
import { applyCancelCommand, noteOnLatestLiveRun } from "./pr-requests";
import { writeRecords } from "./records";
import { cachedLiveRules, cachedRepository, type LiveRules } from "./config-cache";

export type EvaluationResult = {
  deliveryId: string;
  /** "skipped": already processed (a retry); "missing": no such delivery. */
  outcome: DeliveryOutcome | "skipped" | "missing";
  detail: string;
  created: { runId: string; number: number; status: string }[];
  duplicates: { runId: string; number: number }[];
  refused: string[];
  cancelled: number[];
  /** Decided by the prefilter (no facts read, no transaction) rather than the full evaluation. */
  prefiltered: boolean;
};

/** A result with nothing created, dropped, refused or cancelled (yet). */
export const result = (deliveryId: string, outcome: EvaluationResult["outcome"], detail: string): EvaluationResult => ({
  deliveryId,
  outcome,
  detail,
  created: [],
  duplicates: [],
  refused: [],
  cancelled: [],
  prefiltered: false,
});

const zForgeKind = z.enum(ForgeKind);

export type PendingDelivery = DeliveryRow & {
  processedAt: Date | null;
  /** The configuration's generation when the row was read (config-cache.ts); null: unknown. */
  configGeneration?: string | null;
};

/**
 * The delivery row evaluation reads (the job reads it once and passes it on), with the
 * configuration's generation in the same statement: the config cache then costs no statement.
 */
export async function readDelivery(db: Db, deliveryId: string): Promise<PendingDelivery | null> {
  return (await readDeliveries(db, [deliveryId]))[0] ?? null;
}

/** readDelivery for a batch: every row in one statement (ids with no row are left out). */
export async function readDeliveries(db: Db, deliveryIds: readonly string[]): Promise<PendingDelivery[]> {
  const rows = await db.$queryRaw<(Omit<PendingDelivery, "source"> & { source: string })[]>`
    SELECT d."deliveryId", d."source"::text AS "source", d."event", d."action", d."payload", d."receivedAt", d."processedAt",
           (SELECT g."generation"::text FROM "EvaluationConfigGeneration" g WHERE g."id" = 1) AS "configGeneration"
    FROM "WebhookDelivery" d WHERE d."deliveryId" = ANY(${[...deliveryIds]}::text[])`;
  return rows.map((row) => ({ ...row, source: zForgeKind.parse(row.source) }));
}

export type EvaluateOptions = {
  db: Db;
  now?: Date;
  /** Reads a GitHub PR's changed files for path-filtered rules; absent: they stay unknown. */
  changedFiles?: ChangedFilesLookup | null;
  /** Reads a GitHub failed job's log (job-log.ts); absent: triage and the agent go without it. */
  jobLog?: JobLogReader | null;
  /** false: skip the prefilter (the tests that prove it agrees with the full evaluation). */
  prefilter?: boolean;
};

export async function evaluateDelivery(
  opts: EvaluateOptions & {
    deliveryId: string;
    /** The delivery's row when the caller has read it already (readDelivery). */
    delivery?: PendingDelivery | null;
  },
): Promise<EvaluationResult> {
  const { db, deliveryId } = opts;
  const now = opts.now ?? new Date();
  const delivery = opts.delivery === undefined ? await readDelivery(db, deliveryId) : opts.delivery;
  if (!delivery) return result(deliveryId, "missing", "no such delivery");
  if (delivery.processedAt) return result(deliveryId, "skipped", "already processed");
  const early = await decideEarly(db, delivery, { ...opts, now });
  if (early.kind === "final") {
    await finish(db, deliveryId, early.outcome, early.result.detail, now);
    return early.result;
  }
  return evaluateInFull(early, { ...opts, now });
}

/** What the cheap part decided: the delivery's final outcome (nothing to store but it), or the full evaluation's input. */
export type EarlyDecision = { kind: "final"; outcome: DeliveryOutcome; result: EvaluationResult } | { kind: "full"; screened: ScreenedEvent; rules: LiveRules };

/**
 * The cheap part of an evaluation, which writes nothing: screen the delivery (an unusable one is
 * final), then the prefilter (a delivery no rule can act on is final, with what commitPlan would
 * store for a plan with nothing to fire, refuse or supersede). The caller stores a final outcome
 * (evaluateDelivery one by one, batch.ts many in one statement).
 */
export async function decideEarly(db: Db, delivery: PendingDelivery, opts: { now: Date; prefilter?: boolean }): Promise<EarlyDecision> {
  const { deliveryId } = delivery;
  const generation = delivery.configGeneration ?? null;
  const screened = await screenDelivery(db, delivery, (name) => cachedRepository(db, name, generation));
  if (!screened.ok) {
    const secrets = await loadKnownSecrets(db, opts.now);
    const detail = boundedDetail(sanitizePayload(screened.problem, secrets));
    return { kind: "final", outcome: screened.outcome, result: { ...result(deliveryId, screened.outcome, detail), prefiltered: true } };
  }
  const rules = await cachedLiveRules(db, screened.repository.id, generation);
  const early = opts.prefilter === false ? null : prefilterPlan(screened, rules);
  if (!early) return { kind: "full", screened, rules };
  const secrets = await loadKnownSecrets(db, opts.now);
  const out = { ...result(deliveryId, "processed", ""), prefiltered: true };
  out.detail = boundedDetail(sanitizePayload(describe(screened, [], out, early, false), secrets));
  return { kind: "final", outcome: "processed", result: out };
}

/** The full evaluation of a screened delivery: its job log, facts, changed files, plan and commit. */
export async function evaluateInFull(early: Extract<EarlyDecision, { kind: "full" }>, opts: EvaluateOptions & { now: Date }): Promise<EvaluationResult> {
  const { db, now } = opts;
  const { rules } = early;
  const logged = await attachJobLog({ db, screened: early.screened, reader: opts.jobLog ?? null, now });
  const loaded = await withFacts(db, logged.screened);
  if (!loaded.ok) {
    const secrets = await loadKnownSecrets(db, now);
    const detail = boundedDetail(sanitizePayload(loaded.problem, secrets));
    await finish(db, early.screened.deliveryId, loaded.outcome, detail, now);
    return result(early.screened.deliveryId, loaded.outcome, detail);
  }
  const filesNote = await lookUpChangedFiles({ repository: loaded.repository, event: loaded.event, facts: loaded.facts, rules, lookup: opts.changedFiles ?? null });
  const logMissing = loaded.facts.log === null ? logged.note : null;
  return commitPlan({ db, loaded, plan: planEvaluation(loaded, rules), filesNote: [logged.note, filesNote].filter(Boolean).join("; ") || null, logMissing, now });
}

async function commitPlan(opts: { db: Db; loaded: LoadedEvent; plan: EvaluationPlan; filesNote: string | null; logMissing?: string | null; now: Date }): Promise<EvaluationResult> {
  const { db, loaded, plan, now } = opts;
  const { deliveryId, repository, facts, event } = loaded;
  const secrets = await loadKnownSecrets(db, now);
  // Build contexts only for keys no run holds yet (a redelivery storm builds none).
  const taken = await heldKeys(db, plan.fire.map((c) => c.dedupeKey));
  // A red check on a branch our agents touched: its runs carry whose failure it is (stored in the transaction).
  const attribution = await attributionBeforeEvaluation(db, { event, repositoryId: repository.id, prHeadRef: facts.pullRequest?.headRef, now });
  const base = {
    event,
    repository,
    facts,
    actorUserId: loaded.actorUserId,
    deliveryId,
    eventName: loaded.eventName,
    secrets,
    attribution: attribution ? [attribution.entry] : undefined,
  };
  const prepared = new Map<string, PreparedRun>();
  for (const candidate of plan.fire) {
    if (!taken.has(candidate.dedupeKey)) prepared.set(candidate.dedupeKey, await prepareRun({ ...base, db, candidate }));
  }

  // Under a redelivery storm, evaluations of one failure queue on its pipeline's lock and on the
  // pool's connections: wait for them rather than fail and retry the job later.
  return transaction(db, "evaluateDelivery", async (tx) => {
    const [row] = await tx.$queryRaw<{ processedAt: Date | null; reevaluations: number }[]>`
      SELECT "processedAt", "reevaluations" FROM "WebhookDelivery" WHERE "deliveryId" = ${deliveryId} FOR UPDATE`;
    if (!row || row.processedAt) return result(deliveryId, "skipped", "already processed");
    const drops = await openDropLedger(tx, deliveryId, { reevaluation: row.reevaluations > 0 });

    const records = await writeRecords({ tx, repository, event, facts, now, deliveryId });
    // CI triage decides what happens to a failed check; "rerun once" holds the agents back.
    const triage = event.type === "failed_check" ? await triageFailedCheck({ tx, repository, event, records, now, logMissing: opts.logMissing ?? null }) : null;
    const held = triage?.holdsAgents === true;
    if (held) await holdCandidates(drops, triage, [...plan.fire, ...plan.superseded.map((s) => s.candidate)]);
    const outcomes: { ruleName: string; outcome: CommitOutcome }[] = [];
    const winners = new Map<string, string | null>();
    for (const candidate of held ? [] : plan.fire) {
      const outcome = await commitCandidate({
        tx,
        candidate,
        deliveryId,
        drops,
        records,
        now,
        prepare: async () => prepared.get(candidate.dedupeKey) ?? prepareRun({ ...base, db: tx, candidate }),
      });
      outcomes.push({ ruleName: candidate.ruleName, outcome });
      winners.set(candidate.dedupeKey, outcome.kind === "refused" ? null : outcome.runId);
    }
    if (!held) await recordSuperseded(drops, plan.superseded, winners);
    const out = result(deliveryId, "processed", "");
    for (const { outcome } of outcomes) {
      if (outcome.kind === "created") out.created.push({ runId: outcome.runId, number: outcome.number, status: outcome.status });
      else if (outcome.kind === "duplicate") out.duplicates.push({ runId: outcome.runId, number: outcome.number });
      else out.refused.push(outcome.reason);
    }
    if (plan.refusal !== null) {
      const reason = `refused: ${plan.refusal}`;
      await drops.record("refusal", [{ reason }]);
      if (records.pullRequestId) await noteOnLatestLiveRun(tx, records.pullRequestId, reason);
      out.refused.push(plan.refusal);
    }
    if (event.type === "pr_comment" && event.command === "cancel") {
      const cancel = await applyCancelCommand({ tx, event, pullRequestId: records.pullRequestId, actorUserId: loaded.actorUserId, drops, now });
      out.cancelled = cancel.cancelled;
      if (cancel.refused) out.refused.push(cancel.refused);
    }
    await linkTriageToRun(tx, triage, out.created.map((r) => r.runId));
    // A run for a GitHub failed check gets Airlock's check run: a suggestion's offers its two actions.
    await offerOnGithub(tx, { repository, event, created: out.created });
    const allDuplicates = outcomes.length > 0 && outcomes.every((o) => o.outcome.kind === "duplicate");
    out.outcome = allDuplicates ? "duplicate" : "processed";
    const loopNote = await fixLoopOnEvent(tx, { event, repositoryId: repository.id, pullRequestId: records.pullRequestId, createdRunIds: out.created.map((c) => c.runId), attribution, now });
    const triaged = describeTriage(triage);
    const described = describe(loaded, outcomes, out, plan, held);
    out.detail = boundedDetail(sanitizePayload([triaged, described, opts.filesNote, loopNote].filter(Boolean).join("; "), secrets));
    await tx.webhookDelivery.update({ where: { deliveryId }, data: { outcome: out.outcome, detail: out.detail, processedAt: now } });
    return out;
  }, { maxWait: 30_000, timeout: 30_000 });
}

async function finish(db: Db, deliveryId: string, outcome: DeliveryOutcome, detail: string, now: Date) {
  await recordFinal(db, [{ deliveryId, outcome, detail }], now);
}

/**
 * Stores final outcomes (deliveries decided early, or unusable) in one statement; a delivery
 * already processed (a concurrent evaluation, a retry) keeps what it has.
 */
export async function recordFinal(db: Db, finals: readonly { deliveryId: string; outcome: DeliveryOutcome; detail: string }[], now: Date) {
  if (finals.length === 0) return;
  await db.$executeRaw`
    UPDATE "WebhookDelivery" d SET "outcome" = x."outcome"::"DeliveryOutcome", "detail" = x."detail", "processedAt" = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(finals)}::jsonb) AS x("deliveryId" text, "outcome" text, "detail" text)
    WHERE d."deliveryId" = x."deliveryId" AND d."processedAt" IS NULL`;
}

function describe(loaded: Pick<LoadedEvent, "event">, outcomes: { ruleName: string; outcome: CommitOutcome }[], out: EvaluationResult, plan: EvaluationPlan, held: boolean): string {
  const { event } = loaded;
  const parts: string[] = [];
  for (const { ruleName, outcome } of outcomes) {
    if (outcome.kind === "created") parts.push(`run #${outcome.number} ${outcome.status} (rule ${ruleName})`);
    else if (outcome.kind === "duplicate") parts.push(`duplicate of run #${outcome.number} (rule ${ruleName})`);
    else parts.push(`rule ${ruleName} not dispatched: ${outcome.reason}`);
  }
  if (!held) for (const s of plan.superseded) parts.push(`rule ${s.candidate.ruleName} ${s.why}`);
  for (const reason of out.refused.filter((r) => !parts.some((p) => p.endsWith(r)))) parts.push(reason.startsWith("cancel") ? reason : `refused: ${reason}`);
  if (out.cancelled.length > 0) parts.push(`cancelled run${out.cancelled.length === 1 ? "" : "s"} ${out.cancelled.map((n) => `#${n}`).join(", ")}`);
  if (event.type === "pr_updated") parts.push(`pull request #${event.pullRequest.number} ${event.action}: record updated`);
  if (event.type === "pr_review") parts.push(`review (${event.review.state}) on #${event.pullRequest.number} stored`);
  if (event.type === "branch_push") parts.push(`push to ${event.branch} at ${event.headSha.slice(0, 12)} recorded`);
  const recordsOnly = event.type === "pr_updated" || event.type === "pr_review" || event.type === "branch_push";
  if (outcomes.length === 0 && out.refused.length === 0 && !held && !recordsOnly) {
    const reasons = plan.skipped.slice(0, 3).map((s) => (s.ruleName ? `${s.ruleName}: ${s.reason}` : s.reason));
    parts.push(`no run: ${reasons.join("; ") || "no rule matched"}`);
  }
  return parts.join("; ");
}
