// The webhook bench's worker rows: a redelivery storm posted through the real route (its batcher
// groups the jobs as in production) while no worker runs, held in the queue while N real worker
// processes start, then released to all of them at once; what they did is checked exactly.
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/server/db";
import { failedWorkflowJob } from "@/server/domain/ingest/fixtures/deliveries";

export type Send = { event: string; deliveryId: string; body: string };
export type StormRepos = { busy: string; quiet: string };

/** Each unit: 14 sends, 10 distinct deliveries. */
export const SENDS_PER_UNIT = 14;

let serial = 0;
function failure(repo: string, prefix: string) {
  const n = serial++;
  const sha = randomBytes(20).toString("hex");
  const d = failedWorkflowJob({ repo, runId: 60_000_000 + n, jobId: 70_000_000 + n, jobName: "test", step: "Run npm test", headSha: sha, headBranch: "bench" });
  return { sha, send: { event: d.event, body: JSON.stringify(d.payload), deliveryId: `${prefix}-${n}` } };
}

/**
 * A storm of `units` units, shuffled. A unit: one failure of the busy repository (its rule
 * fires) sent 5 times under one delivery id (GitHub redelivering) and under 5 more ids (GitHub
 * reporting it again: distinct deliveries, one dedupe key), and 4 failures of the quiet
 * repository (no rule of its own matches: most of an organisation's deliveries), sent once.
 */
export function stormSends(repos: StormRepos, units: number, prefix: string) {
  const sends: Send[] = [];
  const busyShas: string[] = [];
  const quietShas: string[] = [];
  for (let u = 0; u < units; u++) {
    const busy = failure(repos.busy, prefix);
    busyShas.push(busy.sha);
    for (let i = 0; i < 5; i++) sends.push(busy.send);
    for (let i = 0; i < 5; i++) sends.push({ ...busy.send, deliveryId: `${busy.send.deliveryId}-again-${i}` });
    for (let k = 0; k < 4; k++) {
      const quiet = failure(repos.quiet, prefix);
      quietShas.push(quiet.sha);
      sends.push(quiet.send);
    }
  }
  sends.sort(() => Math.random() - 0.5);
  return { sends, busyShas, quietShas, ids: [...new Set(sends.map((s) => s.deliveryId))] };
}

const FAR = "2999-01-01T00:00:00Z";

/** The queued evaluation jobs are held (run_at far ahead), so workers starting one by one take none. */
export async function holdEvaluations(db: PrismaClient): Promise<{ jobs: number; sizes: number[] }> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH held AS (
      SELECT * FROM graphile_worker.reschedule_jobs(
        ARRAY(SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate'), run_at := ${FAR}::timestamptz))
    SELECT CASE WHEN json_typeof(payload) = 'array' THEN json_array_length(payload) ELSE 1 END::int AS n FROM held`;
  const sizes = rows.map((r) => r.n).sort((a, b) => b - a);
  return { jobs: sizes.length, sizes };
}

/** Every held job runnable now, and every worker told (graphile-worker's own insert notification). */
export async function releaseEvaluations(db: PrismaClient): Promise<void> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker.reschedule_jobs(
      ARRAY(SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate'), run_at := now())`;
  await db.$executeRaw`SELECT pg_notify('jobs:insert', ${JSON.stringify({ count: row?.n ?? 0 })})`;
}

/** Drops what a phase left queued (its workers stopped), so the next row starts from nothing. */
export async function discardBacklog(db: PrismaClient): Promise<number> {
  await db.$executeRaw`SELECT graphile_worker.complete_jobs(ARRAY(SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate'))`;
  return db.webhookDelivery.deleteMany({ where: { processedAt: null } }).then((r) => r.count);
}

/** Until every storm delivery is processed and no runnable evaluation job is left (retries included; held ones wait). */
export async function drained(db: PrismaClient, ids: readonly string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await db.$queryRaw<{ open: number; jobs: number }[]>`
      SELECT (SELECT count(*)::int FROM "WebhookDelivery" WHERE "deliveryId" = ANY(${[...ids]}) AND "processedAt" IS NULL) AS open,
             (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier = 'delivery.evaluate' AND run_at <= now()) AS jobs`;
    if (row!.open === 0 && row!.jobs === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type Verdict = { exact: boolean; problems: string[]; summary: string };

/**
 * What the storm must have produced, exactly: every distinct delivery recorded once and
 * evaluated (processed, none failed); one run per firing rule and failure, each under its own
 * dedupe key; every other delivery of a fired failure one drop under the run's key, never two
 * from one delivery; one triage decision per failed job with its own policy decision; at most
 * one write-back per idempotency key (suggested runs execute nothing, so none is expected).
 */
export async function verdict(
  db: PrismaClient,
  storm: { ids: readonly string[]; busyShas: readonly string[]; quietShas: readonly string[] },
  expected: { runs: number; drops: number; statuses: Record<number, number>; sentStatuses: Record<number, number> },
): Promise<Verdict> {
  const ids = [...storm.ids];
  const shas = [...storm.busyShas, ...storm.quietShas];
  const [r] = await db.$queryRaw<
    { recorded: number; open: number; failed: number; runs: number; keys: number; drops: number; pairs: number; triage: number; triageJobs: number; decisions: number; writeBacks: number; writeBackKeys: number }[]
  >`
    SELECT (SELECT count(*)::int FROM "WebhookDelivery" WHERE "deliveryId" = ANY(${ids})) AS recorded,
           (SELECT count(*)::int FROM "WebhookDelivery" WHERE "deliveryId" = ANY(${ids}) AND "processedAt" IS NULL) AS open,
           (SELECT count(*)::int FROM "WebhookDelivery" WHERE "deliveryId" = ANY(${ids}) AND "outcome" = 'failed') AS failed,
           (SELECT count(*)::int FROM "AgentDispatchRun" WHERE "headSha" = ANY(${shas})) AS runs,
           (SELECT count(DISTINCT "dedupeKey")::int FROM "AgentDispatchRun" WHERE "headSha" = ANY(${shas})) AS keys,
           (SELECT count(*)::int FROM "TriggerDrop" d JOIN "AgentDispatchRun" r ON r."id" = d."runId" WHERE r."headSha" = ANY(${shas}) AND d."dedupeKey" = r."dedupeKey") AS drops,
           (SELECT count(DISTINCT (d."deliveryId", d."dedupeKey"))::int FROM "TriggerDrop" d JOIN "AgentDispatchRun" r ON r."id" = d."runId" WHERE r."headSha" = ANY(${shas}) AND d."dedupeKey" = r."dedupeKey") AS pairs,
           (SELECT count(*)::int FROM "TriageDecision" WHERE "headSha" = ANY(${shas})) AS triage,
           (SELECT count(DISTINCT ("pipelineId", coalesce("jobId", '')))::int FROM "TriageDecision" WHERE "headSha" = ANY(${shas})) AS "triageJobs",
           (SELECT count(DISTINCT "policyDecisionId")::int FROM "TriageDecision" WHERE "headSha" = ANY(${shas})) AS decisions,
           (SELECT count(*)::int FROM "WriteBack" w JOIN "AgentDispatchRun" r ON r."id" = w."runId" WHERE r."headSha" = ANY(${shas})) AS "writeBacks",
           (SELECT count(DISTINCT w."idempotencyKey")::int FROM "WriteBack" w JOIN "AgentDispatchRun" r ON r."id" = w."runId" WHERE r."headSha" = ANY(${shas})) AS "writeBackKeys"`;
  const row = r!;
  const failures = shas.length;
  const problems: string[] = [];
  const want = (ok: boolean, what: string) => ok || problems.push(what);
  for (const [status, n] of Object.entries(expected.statuses)) want(expected.sentStatuses[Number(status)] === n, `HTTP ${status}: ${expected.sentStatuses[Number(status)] ?? 0} (${n})`);
  want(row.recorded === ids.length, `${row.recorded} deliveries recorded (${ids.length})`);
  want(row.open === 0, `${row.open} not evaluated`);
  want(row.failed === 0, `${row.failed} failed`);
  want(row.runs === expected.runs, `${row.runs} runs (${expected.runs})`);
  want(row.keys === row.runs, `${row.runs - row.keys} runs share a dedupe key`);
  want(row.drops === expected.drops, `${row.drops} duplicate drops (${expected.drops})`);
  want(row.pairs === row.drops, `${row.drops - row.pairs} drops repeated for one delivery`);
  want(row.triage === failures && row.triageJobs === failures, `${row.triage} triage decisions for ${row.triageJobs} failed jobs (${failures})`);
  want(row.decisions === row.triage, `${row.decisions} policy decisions for ${row.triage} triage decisions`);
  want(row.writeBacks === row.writeBackKeys, `${row.writeBacks - row.writeBackKeys} duplicate write-backs`);
  return {
    exact: problems.length === 0,
    problems,
    summary: `${row.runs} runs, ${row.drops} drops, ${row.triage} triage, ${row.writeBacks} write-backs`,
  };
}
