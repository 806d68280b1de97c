import type { Db } from "@/server/db";
import { visibleRepositoryIds } from "@/server/auth/roles";
import type { ConfigActor } from "@/server/domain/repositories/access";
import { requireRepositoryRoleOf } from "@/server/domain/repositories/access";
import { parseInput } from "@/server/domain/repositories/input";
import { zDryRunInput } from "@/server/domain/triggers/forms/schemas";
import type { Candidate } from "@/server/domain/triggers/matcher";
import { matchLoadedEvent, recentRecordedEvents, type RecordedEventRef } from "./recorded-events";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";

// A trigger rule's dry run, before it is saved: which recent events it would have matched, the
// runs it would have created (task kind, action, dedupe key), and which of those the live path
// would have dropped as duplicates: of a run that holds the key already, or of an earlier event
// in the same list. Events are loaded and matched exactly as evaluateDelivery does
// (recorded-events.ts); only this one rule is matched. Nothing is written.

export type DryRunOutcome = "create" | "duplicate" | "skipped" | "refused" | "unusable";

export type DryRunEvent = {
  ref: RecordedEventRef;
  label: string;
  at: Date;
  repository: string | null;
  outcome: DryRunOutcome;
  reason: string;
  candidate: Pick<Candidate, "taskKind" | "action" | "dedupeKey" | "source" | "reason" | "matchedOn"> | null;
  duplicateOf: { runId: string; number: number } | { event: string } | null;
};

export async function dryRunTriggerRule(opts: { db: Db; actor: ConfigActor; input: unknown; limit?: number }) {
  const { db, actor } = opts;
  const { ruleId, rule: values } = parseInput(zDryRunInput, opts.input);
  const scope =
    values.repositoryId !== null
      ? (await requireRepositoryRoleOf(db, actor, values.repositoryId, "viewer", "dry-run a rule on this repository"), [values.repositoryId])
      : await visibleRepositoryIds(db, { ...actor, name: "" });
  // A disabled rule is tried as if enabled: the dry run answers "what would it do".
  const rule: TriggerRule = { ...values, id: ruleId ?? "new-rule", enabled: true };
  const events = await recentRecordedEvents({ db, repositoryIds: scope, limit: opts.limit ?? 40 });

  const matched = events.map((event) => {
    if (!event.ok) return { event, result: null };
    return { event, result: matchLoadedEvent(event, [rule]) };
  });
  const keys = matched.flatMap((m) => m.result?.candidates.map((c) => c.dedupeKey) ?? []);
  const existing = await db.agentDispatchRun.findMany({ where: { dedupeKey: { in: keys } }, select: { id: true, number: true, dedupeKey: true } });

  // The live path evaluates oldest first: an earlier event takes the key.
  const firstHolder = new Map<string, string>();
  const out: DryRunEvent[] = [];
  let otherKinds = 0;
  for (const { event, result } of [...matched].reverse()) {
    const base = { ref: event.ref, label: event.label, at: event.at, candidate: null, duplicateOf: null };
    if (!event.ok) {
      out.push({ ...base, repository: event.repositoryName, outcome: "unusable", reason: event.problem });
      continue;
    }
    const repository = event.repository.fullName;
    if (result === null || result.triggerKind !== rule.kind) {
      otherKinds++;
      continue;
    }
    if (result.refusal !== null) {
      out.push({ ...base, repository, outcome: "refused", reason: result.refusal });
      continue;
    }
    const candidate = result.candidates[0];
    if (!candidate) {
      out.push({ ...base, repository, outcome: "skipped", reason: result.skipped[0]?.reason ?? "no match" });
      continue;
    }
    const picked = {
      taskKind: candidate.taskKind,
      action: candidate.action,
      dedupeKey: candidate.dedupeKey,
      source: candidate.source,
      reason: candidate.reason,
      matchedOn: candidate.matchedOn,
    };
    const run = existing.find((r) => r.dedupeKey === candidate.dedupeKey);
    const holder = firstHolder.get(candidate.dedupeKey);
    if (run) {
      out.push({ ...base, repository, outcome: "duplicate", reason: `run #${run.number} already holds this dedupe key`, candidate: picked, duplicateOf: { runId: run.id, number: run.number } });
    } else if (holder) {
      out.push({ ...base, repository, outcome: "duplicate", reason: `an earlier event in this list takes the key: ${holder}`, candidate: picked, duplicateOf: { event: holder } });
    } else {
      firstHolder.set(candidate.dedupeKey, event.label);
      out.push({ ...base, repository, outcome: "create", reason: candidate.reason, candidate: picked });
    }
  }
  out.reverse();
  const count = (o: DryRunOutcome) => out.filter((e) => e.outcome === o).length;
  return {
    ruleId: rule.id,
    kind: rule.kind,
    disabled: !values.enabled,
    scope: scope === "all" ? "all repositories" : `${scope.length} repositor${scope.length === 1 ? "y" : "ies"}`,
    examined: events.length,
    otherKinds,
    events: out,
    summary: { create: count("create"), duplicate: count("duplicate"), skipped: count("skipped"), refused: count("refused"), unusable: count("unusable") },
  };
}

