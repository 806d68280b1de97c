import type { Db } from "@/server/db";
import { Prisma } from "@/server/db";
import { RunStatus } from "@/server/db/generated/enums";

// The observability figures the spec asks for (queued dispatches, wait latency,
// duration, cancellations, approval wait, cost, subagents, write-backs, failed
// dispatches, dedupe drops), computed from the system of record with a few
// aggregate queries, for the /metrics page. Prometheus scrapes live counters and histograms
// instead (server/observability/metrics.ts): sums over rows fall when rows are deleted.

export type Quantiles = { count: number; p50: number | null; p95: number | null; sum: number };

export type MetricsSnapshot = {
  runsByStatus: Record<RunStatus, number>;
  dispatchWaitSeconds: Quantiles;
  runDurationSeconds: Quantiles;
  approvalWaitSeconds: Quantiles;
  approvalsPending: number;
  costUsd: number;
  tokens: { input: number; output: number };
  subagentsStarted: number;
  writeBacks: Record<"pending" | "succeeded" | "failed", number>;
  dedupeDrops: number;
  deliveries: Record<string, number>;
  /** Window the latency figures cover. */
  windowHours: number;
};

type QuantileRow = { count: bigint; p50: number | null; p95: number | null; sum: number | null };

/** p50/p95/sum/count of the `s` column (seconds) of a subquery. */
async function quantiles(db: Db, seconds: Prisma.Sql): Promise<Quantiles> {
  const [r] = await db.$queryRaw<QuantileRow[]>`
    SELECT count(*) AS count,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY s)::float8 AS p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY s)::float8 AS p95,
      sum(s)::float8 AS sum
    FROM (${seconds}) t`;
  return { count: Number(r?.count ?? 0), p50: r?.p50 ?? null, p95: r?.p95 ?? null, sum: r?.sum ?? 0 };
}

/** Figures over `repositoryIds` ("all" for a global admin or the scrape endpoint). */
export async function metricsSnapshot(opts: {
  db: Db;
  repositoryIds: string[] | "all";
  now?: Date;
  windowHours?: number;
}): Promise<MetricsSnapshot> {
  const { db } = opts;
  const windowHours = opts.windowHours ?? 24 * 7;
  const since = new Date((opts.now ?? new Date()).getTime() - windowHours * 3600_000);
  const all = opts.repositoryIds === "all";
  const ids = all ? [] : (opts.repositoryIds as string[]);
  // A run filter usable in raw SQL: every figure below is scoped by repository.
  const runScope = all ? Prisma.sql`TRUE` : ids.length ? Prisma.sql`r."repositoryId" IN (${Prisma.join(ids)})` : Prisma.sql`FALSE`;
  const where = all ? {} : { repositoryId: { in: ids } };

  const [statusGroups, wait, duration, approvalWait, pending, totals, subagents, writeBacks, drops, deliveries] =
    await Promise.all([
      db.agentDispatchRun.groupBy({ by: ["status"], where, _count: { _all: true } }),
      quantiles(db, Prisma.sql`
        SELECT EXTRACT(EPOCH FROM a."startedAt" - a."queuedAt") AS s
        FROM "DispatchAttempt" a JOIN "AgentDispatchRun" r ON r.id = a."runId"
        WHERE a."startedAt" IS NOT NULL AND a."queuedAt" >= ${since} AND ${runScope}`),
      quantiles(db, Prisma.sql`
        SELECT EXTRACT(EPOCH FROM r."finishedAt" - r."startedAt") AS s
        FROM "AgentDispatchRun" r
        WHERE r."finishedAt" IS NOT NULL AND r."startedAt" IS NOT NULL AND r."createdAt" >= ${since} AND ${runScope}`),
      quantiles(db, Prisma.sql`
        SELECT EXTRACT(EPOCH FROM ap."decidedAt" - ap."createdAt") AS s
        FROM "ApprovalRequest" ap JOIN "AgentDispatchRun" r ON r.id = ap."runId"
        WHERE ap."decidedAt" IS NOT NULL AND ap."createdAt" >= ${since} AND ${runScope}`),
      db.approvalRequest.count({ where: { status: "pending", run: where } }),
      db.agentDispatchRun.aggregate({ where, _sum: { costUsd: true, inputTokens: true, outputTokens: true } }),
      db.runEvent.count({ where: { type: "subagent_started", run: where } }),
      db.writeBack.groupBy({ by: ["outcome"], where: { run: where }, _count: { _all: true } }),
      all
        ? db.triggerDrop.count()
        : db.$queryRaw<{ n: bigint }[]>`
            SELECT count(*) AS n FROM "TriggerDrop" d JOIN "AgentDispatchRun" r ON r.id = d."runId" WHERE ${runScope}`.then(
            (rows) => Number(rows[0]?.n ?? 0),
          ),
      // Deliveries are not tied to a repository row until evaluated: admins only.
      all ? db.webhookDelivery.groupBy({ by: ["outcome"], _count: { _all: true } }) : Promise.resolve([]),
    ]);

  const runsByStatus = Object.fromEntries(Object.values(RunStatus).map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const g of statusGroups) runsByStatus[g.status] = g._count._all;
  const wb = { pending: 0, succeeded: 0, failed: 0 };
  for (const g of writeBacks) wb[g.outcome] = g._count._all;
  return {
    runsByStatus,
    dispatchWaitSeconds: wait,
    runDurationSeconds: duration,
    approvalWaitSeconds: approvalWait,
    approvalsPending: pending,
    costUsd: Number(totals._sum.costUsd ?? 0),
    tokens: { input: totals._sum.inputTokens ?? 0, output: totals._sum.outputTokens ?? 0 },
    subagentsStarted: subagents,
    writeBacks: wb,
    dedupeDrops: drops,
    deliveries: Object.fromEntries(deliveries.map((g) => [g.outcome, g._count._all])),
    windowHours,
  };
}

export type MetricsPoint = {
  /** Bucket start (ISO). */
  at: string;
  runsCreated: number;
  runsFailed: number;
  writeBacksSucceeded: number;
  writeBacksFailed: number;
  /** Median queue wait of attempts queued in the bucket, seconds (null: none started). */
  queueWaitP50: number | null;
  costUsd: number;
};

type PointRow = { at: Date; runsCreated: number; runsFailed: number; wbOk: number; wbFailed: number; waitP50: number | null; cost: number | null };

/**
 * The same figures over time: one point per hour (windows up to 48 h) or per day, zero-filled,
 * scoped like metricsSnapshot. Runs and cost by creation time, write-backs by creation time,
 * queue wait by the attempt's queue time.
 */
export async function metricsSeries(opts: { db: Db; repositoryIds: string[] | "all"; now?: Date; windowHours: number }): Promise<{ bucket: "hour" | "day"; points: MetricsPoint[] }> {
  const now = opts.now ?? new Date();
  const bucket = opts.windowHours <= 48 ? "hour" : "day";
  const step = bucket === "hour" ? Prisma.sql`interval '1 hour'` : Prisma.sql`interval '1 day'`;
  const since = new Date(now.getTime() - opts.windowHours * 3600_000);
  const all = opts.repositoryIds === "all";
  const ids = all ? [] : (opts.repositoryIds as string[]);
  const runScope = all ? Prisma.sql`TRUE` : ids.length ? Prisma.sql`r."repositoryId" IN (${Prisma.join(ids)})` : Prisma.sql`FALSE`;
  const rows = await opts.db.$queryRaw<PointRow[]>`
    WITH b AS (
      SELECT generate_series(date_trunc(${bucket}, ${since}::timestamptz), date_trunc(${bucket}, ${now}::timestamptz), ${step}) AS at
    ), runs AS (
      SELECT date_trunc(${bucket}, r."createdAt") AS at, count(*)::int AS n, (count(*) FILTER (WHERE r."status" = 'failed'))::int AS failed, sum(r."costUsd")::float8 AS cost
      FROM "AgentDispatchRun" r WHERE r."createdAt" >= ${since} AND ${runScope} GROUP BY 1
    ), wb AS (
      SELECT date_trunc(${bucket}, w."createdAt") AS at, (count(*) FILTER (WHERE w."outcome" = 'succeeded'))::int AS ok, (count(*) FILTER (WHERE w."outcome" = 'failed'))::int AS failed
      FROM "WriteBack" w JOIN "AgentDispatchRun" r ON r."id" = w."runId" WHERE w."createdAt" >= ${since} AND ${runScope} GROUP BY 1
    ), wait AS (
      SELECT date_trunc(${bucket}, a."queuedAt") AS at, percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM a."startedAt" - a."queuedAt"))::float8 AS p50
      FROM "DispatchAttempt" a JOIN "AgentDispatchRun" r ON r."id" = a."runId"
      WHERE a."startedAt" IS NOT NULL AND a."queuedAt" >= ${since} AND ${runScope} GROUP BY 1
    )
    SELECT b.at, coalesce(runs.n, 0) AS "runsCreated", coalesce(runs.failed, 0) AS "runsFailed", coalesce(wb.ok, 0) AS "wbOk", coalesce(wb.failed, 0) AS "wbFailed",
      wait.p50 AS "waitP50", runs.cost
    FROM b LEFT JOIN runs USING (at) LEFT JOIN wb USING (at) LEFT JOIN wait USING (at) ORDER BY b.at`;
  return {
    bucket,
    points: rows.map((r) => ({
      at: r.at.toISOString(),
      runsCreated: r.runsCreated,
      runsFailed: r.runsFailed,
      writeBacksSucceeded: r.wbOk,
      writeBacksFailed: r.wbFailed,
      queueWaitP50: r.waitP50,
      costUsd: r.cost ?? 0,
    })),
  };
}
