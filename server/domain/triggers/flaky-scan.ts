// Flaky triage's producer (seed 002, "Flaky test triage"): a scan of one flaky-scan rule reads
// the failed jobs of its window, groups them by failure signature, and sends each group that
// crosses the rule's threshold as a `flaky_scan` event through the same path as every CI event
// (ingestCiEvent -> delivery.evaluate -> trigger rules -> a triage run). The event's dedupe key
// is the spec's: signature + query digest + result-set digest, so the same failures found again
// the next night are a dropped duplicate and a new failure makes a new triage.
//
// A group is a cluster when it has at least `scanThreshold` failures, in at least two CI runs,
// and the same job also passed in the window: a job that only ever fails is broken, not flaky,
// and its failed check is already a `failed_check` trigger. Every group, cluster or not, is
// stored on the scan with the reason, so a maintainer sees what a scan looked at and why.
import { parseCronItem, type ParsedCronItem } from "graphile-worker";
import { transaction, type Db, type Prisma, type TriggerRule } from "@/server/db";
import { AppError } from "@/server/errors";
import { digestOf, sha256 } from "@/server/lib/digest";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import type { FlakyScanEvent } from "@/server/domain/ci-events/ci-event";
import { matchBranch, matchExact, matchJob } from "./match-keys";

/** Failures read per scan: a window this busy is summarised by its newest failures. */
export const MAX_FAILURES_PER_SCAN = 5_000;
const MAX_TESTS_PER_CLUSTER = 50;
const SCANNER = { login: "airlock-flaky-scan", type: "bot" as const, association: null, airlockRole: null };

export type ScanGroup = {
  repository: string;
  signature: string;
  jobName: string;
  workflowName: string;
  branch: string | null;
  occurrences: number;
  pipelines: number;
  passes: number;
  testNames: string[];
  cluster: boolean;
  why: string;
  /** The delivery the cluster was sent as (null when it is not a cluster). */
  deliveryId: string | null;
  resultSetDigest: string;
};

export type ScanResult = { scanId: string; duplicate: boolean; groups: ScanGroup[] };

/** graphile-worker's own crontab dialect (UTC), so a rule's schedule means what the worker's does. */
export function parseScanSchedule(schedule: string): ParsedCronItem | string {
  try {
    return parseCronItem({ task: "flaky.scan", identifier: "flaky-scan", match: schedule });
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Whether a schedule fires at `minute` (UTC). */
export function scheduleFiresAt(item: ParsedCronItem, minute: Date): boolean {
  return item.match({ min: minute.getUTCMinutes(), hour: minute.getUTCHours(), date: minute.getUTCDate(), month: minute.getUTCMonth() + 1, dow: minute.getUTCDay() });
}

export const floorToMinute = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000);

type ScanRule = Pick<TriggerRule, "id" | "kind" | "enabled" | "repositoryId" | "workflow" | "job" | "branchGlob" | "failureSignature" | "scanWindowHours" | "scanThreshold">;

/**
 * Scans one rule at one minute, once: a second call for the same rule and minute (a retried job,
 * "Scan now" twice, raced) gets the stored scan and records nothing new. Every call sends the
 * scan's clusters, each under an id fixed by rule, minute and signature (a repeated id records
 * nothing), so a retry after a crash between the scan row and its deliveries sends what is missing.
 */
export async function runFlakyScan(opts: { db: Db; ruleId: string; at: Date; requestedBy: string }): Promise<ScanResult> {
  const { db } = opts;
  const at = floorToMinute(opts.at);
  const rule = await db.triggerRule.findUnique({ where: { id: opts.ruleId } });
  if (!rule) throw new AppError("NOT_FOUND", "No such trigger rule.", { reason: "no_such_rule" });
  if (rule.kind !== "flaky_scan") throw new AppError("UNPROCESSABLE", `${rule.name} is a ${rule.kind} rule: only flaky-scan rules scan.`, { reason: "not_a_flaky_scan_rule" });
  const stored = await db.flakyScan.findUnique({ where: { ruleId_at: { ruleId: rule.id, at } } });
  if (stored) return sendClusters(db, stored, true);

  const windowHours = rule.scanWindowHours ?? 72;
  const windowFrom = new Date(at.getTime() - windowHours * 3_600_000);
  // Delivery ids before the row is written: a raced or retried call reads complete groups.
  const groups = (await groupFailures(db, rule, windowFrom, at)).map((g) => ({
    ...g,
    deliveryId: g.cluster ? `flaky-scan-${sha256(`${rule.id}:${at.toISOString()}:${g.repository}:${g.signature}`).slice(0, 32)}` : null,
  }));
  const queryDigest = digestOf({ ruleId: rule.id, workflow: rule.workflow, job: rule.job, branch: rule.branchGlob, signature: rule.failureSignature, repositoryId: rule.repositoryId, windowHours, threshold: rule.scanThreshold });

  // The scan row first (unique per rule and minute): a raced second scan stops here.
  const scan = await transaction(db, "recordFlakyScan", async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO "FlakyScan" ("id", "ruleId", "at", "windowFrom", "queryDigest", "groups", "requestedBy")
      VALUES (${`scan_${sha256(`${rule.id}:${at.toISOString()}`).slice(0, 24)}`}, ${rule.id}, ${at}, ${windowFrom}, ${queryDigest}, ${JSON.stringify(groups)}::jsonb, ${opts.requestedBy})
      ON CONFLICT ("ruleId", "at") DO NOTHING RETURNING "id"`;
    return rows[0] ?? null;
  });
  if (!scan) return sendClusters(db, await db.flakyScan.findUniqueOrThrow({ where: { ruleId_at: { ruleId: rule.id, at } } }), true);
  return sendClusters(db, { id: scan.id, at, windowFrom, queryDigest, groups: groups as unknown as Prisma.JsonValue }, false);
}

/** Sends each cluster of a stored scan as its delivery (a repeated delivery id records nothing). */
async function sendClusters(db: Db, scan: { id: string; at: Date; windowFrom: Date; queryDigest: string; groups: Prisma.JsonValue }, duplicate: boolean): Promise<ScanResult> {
  const groups = scan.groups as unknown as ScanGroup[];
  for (const g of groups) {
    if (!g.cluster || !g.deliveryId) continue;
    const repo = await db.repository.findUniqueOrThrow({ where: { fullName: g.repository } });
    const event: FlakyScanEvent = {
      type: "flaky_scan",
      origin: "airlock",
      repository: { fullName: repo.fullName, cloneUrl: repo.cloneUrl, htmlUrl: null, defaultBranch: repo.defaultBranch, visibility: repo.visibility },
      actor: SCANNER,
      signature: g.signature,
      workflowName: g.workflowName,
      jobName: g.jobName,
      testNames: g.testNames,
      branch: g.branch,
      paths: pathsOfTests(g.testNames),
      queryDigest: scan.queryDigest,
      resultSetDigest: g.resultSetDigest,
      window: { from: scan.windowFrom.toISOString(), to: scan.at.toISOString() },
      occurrences: g.occurrences,
    };
    await ingestCiEvent({ db, event, deliveryId: g.deliveryId, now: scan.at });
  }
  return { scanId: scan.id, duplicate, groups };
}

/** The window's failures that the rule's keys select (the matcher's own predicates), grouped. */
async function groupFailures(db: Db, rule: ScanRule, from: Date, to: Date): Promise<ScanGroup[]> {
  const pipelineWhere: Prisma.PipelineWhereInput = {
    createdAt: { gt: from, lte: to },
    repository: { disabledAt: null },
    ...(rule.repositoryId ? { repositoryId: rule.repositoryId } : {}),
  };
  const failed = await db.job.findMany({
    where: {
      conclusion: { in: ["failure", "timed_out"] },
      failureSignature: rule.failureSignature ?? { not: null },
      pipeline: pipelineWhere,
    },
    orderBy: { createdAt: "desc" },
    take: MAX_FAILURES_PER_SCAN,
    select: { id: true, name: true, failureSignature: true, failingTests: true, pipelineId: true, pipeline: { select: { workflowName: true, headBranch: true, repository: { select: { fullName: true } } } } },
  });
  const selected = failed.filter(
    (j) => matchExact("workflow", rule.workflow, j.pipeline.workflowName) === null && matchJob(rule.job, j.name) === null && matchBranch(rule.branchGlob, j.pipeline.headBranch) === null,
  );

  type Acc = { repository: string; signature: string; jobs: typeof selected };
  const bySignature = new Map<string, Acc>();
  for (const j of selected) {
    const k = `${j.pipeline.repository.fullName}\u0000${j.failureSignature}`;
    const acc = bySignature.get(k) ?? { repository: j.pipeline.repository.fullName, signature: j.failureSignature!, jobs: [] };
    acc.jobs.push(j);
    bySignature.set(k, acc);
  }

  const threshold = rule.scanThreshold ?? 3;
  const groups: ScanGroup[] = [];
  for (const acc of bySignature.values()) {
    const jobName = mostCommon(acc.jobs.map((j) => j.name));
    const workflowName = mostCommon(acc.jobs.map((j) => j.pipeline.workflowName));
    const branches = new Set(acc.jobs.map((j) => j.pipeline.headBranch));
    const pipelines = new Set(acc.jobs.map((j) => j.pipelineId)).size;
    const passes = await db.job.count({
      where: { name: jobName, conclusion: "success", pipeline: { ...pipelineWhere, workflowName, repository: { fullName: acc.repository, disabledAt: null } } },
    });
    const occurrences = acc.jobs.length;
    const why =
      occurrences < threshold
        ? `${occurrences} of the ${threshold} failures the rule needs`
        : pipelines < 2
          ? "every failure is in one CI run: not repeated across runs"
          : passes === 0
            ? `${jobName} never passed in the window: broken, not flaky (its failed checks are failed_check triggers)`
            : `${occurrences} failures in ${pipelines} runs, and ${passes} passing runs of ${jobName}`;
    groups.push({
      repository: acc.repository,
      signature: acc.signature,
      jobName,
      workflowName,
      branch: branches.size === 1 ? [...branches][0]! : null,
      occurrences,
      pipelines,
      passes,
      testNames: [...new Set(acc.jobs.flatMap((j) => j.failingTests))].sort().slice(0, MAX_TESTS_PER_CLUSTER),
      cluster: occurrences >= threshold && pipelines >= 2 && passes > 0,
      why,
      deliveryId: null,
      // The failures found, order-free: the same set found again is the same triage.
      resultSetDigest: digestOf(acc.jobs.map((j) => j.id).sort()),
    });
  }
  return groups.sort((a, b) => b.occurrences - a.occurrences || a.signature.localeCompare(b.signature));
}

/** The affected paths: the file of each failing test ("src/a.test.ts > sum > adds" -> src/a.test.ts). */
export function pathsOfTests(testNames: readonly string[]): string[] {
  const files = testNames.map((t) => t.split(" > ")[0]!.trim()).filter((f) => /^[\w.@-]+(\/[\w.@-]+)*\.\w+$/.test(f));
  return [...new Set(files)].sort();
}

function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}

/**
 * The minute's tick: which enabled flaky-scan rules' schedules fire at `minute`. The worker's
 * crontab runs it every minute (flaky.tick) and queues one flaky.scan per rule and minute.
 */
export async function dueFlakyScans(db: Db, minute: Date): Promise<{ ruleId: string; at: Date }[]> {
  const at = floorToMinute(minute);
  const rules = await db.triggerRule.findMany({ where: { kind: "flaky_scan", enabled: true, scanSchedule: { not: null } }, select: { id: true, scanSchedule: true } });
  const due: { ruleId: string; at: Date }[] = [];
  for (const r of rules) {
    const item = parseScanSchedule(r.scanSchedule!);
    // A schedule saved before this parser refused it never fires; the rule page says why.
    if (typeof item !== "string" && scheduleFiresAt(item, at)) due.push({ ruleId: r.id, at });
  }
  return due;
}
