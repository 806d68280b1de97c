import type { Tx } from "@/server/db";
import type { StackSpec } from "../stacks/spec";

// A repository's daily cost cap (as gh-aw caps AI credits per day), held at claim. "Today" is
// the UTC calendar day; an attempt belongs to the day it was claimed in. Each claim reserves its
// stack's per-attempt cap (what Airlock's meter lets it spend, cost-meter.ts) under the
// repository's advisory lock, so two attempts claimed at once cannot both pass the cap: the
// second waits for the first to commit and then counts its reservation. A running attempt
// counts as the larger of its cost so far and its reservation; an ended one as its real cost
// (settled), or its reservation when that cost is unknown (a model without a price). Pure SQL
// in the claim's transaction; the figures in a refusal are the ones it decided on.

/** Midnight UTC of `now`'s day: where "today" starts for the daily cap. */
export const utcDayStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

const usd = (n: number) => `$${n.toFixed(2)}`;

export type DailyCapCheck = { kind: "none" } | { kind: "ok"; reserveUsd: number } | { kind: "refused"; reason: string };

/**
 * Takes the repository's daily-cap lock (held until the claim commits) and decides whether an
 * attempt of `spec` fits what is left of today's cap. Call it before claiming a pool slot; on
 * "ok", record the reservation with reserveDailyCost in the same transaction.
 */
export async function checkDailyCostCap(tx: Tx, opts: { repositoryId: string; attemptId: string; spec: StackSpec; now: Date }): Promise<DailyCapCheck> {
  const [repo] = await tx.$queryRaw<{ fullName: string; cap: string | null }[]>`
    SELECT "fullName", "dailyCostCapUsd"::text AS "cap" FROM "Repository" WHERE "id" = ${opts.repositoryId}`;
  if (!repo || repo.cap === null) return { kind: "none" };
  const cap = Number(repo.cap);
  // A scripted stack calls no model; any other stack must say what one attempt may spend.
  const reserveUsd = opts.spec.limits.maxCostUsd;
  if (reserveUsd <= 0 && opts.spec.adapter.kind !== "scripted") {
    return {
      kind: "refused",
      reason: `${repo.fullName} has a daily cost cap of ${usd(cap)} (UTC day), and this stack sets no cost cap, so its attempt cannot reserve what it may spend; give the stack a cost cap`,
    };
  }
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`airlock.daily-cost:${opts.repositoryId}`}, 0))`;
  const dayStart = utcDayStart(opts.now);
  const [today] = await tx.$queryRaw<{ spent: string; reserved: string }[]>`
    SELECT
      coalesce(sum(a."costUsd"), 0)::text AS "spent",
      coalesce(sum(CASE WHEN a."status" IN ('starting', 'running') OR a."costUnknown" IS NOT NULL
                        THEN greatest(coalesce(a."costReservedUsd", 0) - a."costUsd", 0) ELSE 0 END), 0)::text AS "reserved"
    FROM "DispatchAttempt" a JOIN "AgentDispatchRun" r ON r."id" = a."runId"
    WHERE r."repositoryId" = ${opts.repositoryId} AND a."id" <> ${opts.attemptId}
      AND coalesce(a."costReservedAt", a."startedAt", a."queuedAt") >= ${dayStart}`;
  const spent = Number(today?.spent ?? 0);
  const reserved = Number(today?.reserved ?? 0);
  // In cents, so a figure like 0.1 + 0.2 cannot pass a cap it meets.
  if (Math.round((spent + reserved + reserveUsd) * 100) > Math.round(cap * 100)) {
    const held = reserved > 0 ? ` and ${usd(reserved)} reserved by running attempts` : "";
    return {
      kind: "refused",
      reason: `the daily cost cap of ${repo.fullName} would be passed: ${usd(spent)} spent today (UTC)${held}, plus this attempt's ${usd(reserveUsd)} cost cap, is more than the ${usd(cap)} cap`,
    };
  }
  return { kind: "ok", reserveUsd };
}

/** Records the claimed attempt's reservation (same transaction as the check and the claim). */
export async function reserveDailyCost(tx: Tx, opts: { attemptId: string; reserveUsd: number; now: Date }) {
  await tx.$executeRaw`
    UPDATE "DispatchAttempt" SET "costReservedUsd" = ${opts.reserveUsd.toFixed(6)}::numeric, "costReservedAt" = ${opts.now}
    WHERE "id" = ${opts.attemptId}`;
}
