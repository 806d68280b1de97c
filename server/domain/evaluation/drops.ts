import type { Tx } from "@/server/db";
import type { TriageOutcome } from "@/server/domain/triage/triage";
import type { Candidate } from "@/server/domain/triggers/matcher";

// A delivery's drops, written once: the deliveries page may evaluate a processed delivery again
// (after a rule changed, or the repository was registered), and that re-evaluation must not add
// a second row for a drop the delivery already has (same kind, dedupe key and rule; or the same
// reason for a drop without a key), nor call the run this very delivery created a duplicate of
// itself. A first evaluation reads nothing: only a re-evaluated delivery loads its earlier drops.

type DropKind = "duplicate" | "refused" | "superseded" | "held" | "refusal" | "cancel";
type DropRow = { dedupeKey?: string | null; reason: string; ruleId?: string | null; runId?: string | null };

const keyOf = (kind: DropKind, row: DropRow) => [kind, row.dedupeKey ?? "", row.ruleId ?? "", row.dedupeKey ? "" : row.reason].join("\u0000");

const kindOfReason = (reason: string): DropKind =>
  reason.startsWith("duplicate trigger") ? "duplicate"
  : reason.startsWith("not dispatched") ? "refused"
  : reason.startsWith("held by triage") ? "held"
  : reason.startsWith("refused:") ? "refusal"
  : reason.startsWith("cancel") ? "cancel"
  : "superseded";

export type DropLedger = {
  readonly deliveryId: string;
  /** Writes the rows this delivery does not have yet; returns how many it wrote. */
  record(kind: DropKind, rows: readonly DropRow[]): Promise<number>;
  /** Whether this delivery's own earlier evaluation created the run (then it is no duplicate of it). */
  createdRun(runId: string): Promise<boolean>;
};

export async function openDropLedger(tx: Tx, deliveryId: string, opts: { reevaluation: boolean }): Promise<DropLedger> {
  const seen = new Set<string>();
  if (opts.reevaluation) {
    const earlier = await tx.triggerDrop.findMany({ where: { deliveryId }, select: { dedupeKey: true, reason: true, ruleId: true }, take: 5000 });
    for (const d of earlier) seen.add(keyOf(kindOfReason(d.reason), d));
  }
  return {
    deliveryId,
    async record(kind, rows) {
      const fresh = rows.filter((r) => {
        const key = keyOf(kind, r);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      if (fresh.length === 0) return 0;
      await tx.triggerDrop.createMany({
        data: fresh.map((r) => ({ dedupeKey: r.dedupeKey ?? null, reason: r.reason, ruleId: r.ruleId ?? null, runId: r.runId ?? null, deliveryId })),
      });
      return fresh.length;
    },
    async createdRun(runId) {
      if (!opts.reevaluation) return false;
      const matched = await tx.runEvent.findFirst({ where: { runId, type: "trigger_matched", payload: { path: ["deliveryId"], equals: deliveryId } }, select: { seq: true } });
      return matched !== null;
    },
  };
}

/** rerun_once holds the trigger rules' agents back: each candidate is recorded as a drop. */
export async function holdCandidates(drops: DropLedger, outcome: TriageOutcome, candidates: readonly Candidate[]): Promise<void> {
  if (candidates.length === 0) return;
  await drops.record(
    "held",
    candidates.map((c) => ({ dedupeKey: c.dedupeKey, ruleId: c.ruleId, reason: `held by triage: ${outcome.triage.disposition} — ${outcome.triage.actionDetail}`.slice(0, 2000) })),
  );
}
