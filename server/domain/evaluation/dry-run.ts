import type { Db } from "@/server/db";
import { visibleRepositoryIds } from "@/server/auth/roles";
import type { UserActor } from "@/server/domain/actor";
import { requireRepositoryRoleOf } from "@/server/domain/access";
import { parseInput } from "@/server/domain/input";
import { zDryRunInput } from "@/server/domain/triggers/forms/schemas";
import type { Candidate } from "@/server/domain/triggers/matcher";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";
import type { RecordedEventRef } from "./load";
import { heldKeys, liveRulesFor, planEvaluation } from "./plan";
import { recentRecordedEvents } from "./recorded-events";

// A trigger rule's dry run, before it is saved: which recent events it would have matched, the
// runs it would have created (task kind, action, dedupe key), which of those the live path would
// have dropped as duplicates (of a run that holds the key already, or of an earlier event in the
// same list), and which another rule of the repository would have taken precedence over. The
// rule is planned beside the repository's live rules (the edited rule in place of its saved
// version), by the live path's own loader and planner (load.ts, plan.ts). Nothing is written.
// What the dry run cannot know: changed files the live path would look up on GitHub (path-
// filtered rules then say "unknown"), and a CI triage verdict that holds agents back.

export type DryRunOutcome = "create" | "duplicate" | "superseded" | "skipped" | "refused" | "unusable";

export type DryRunEvent = {
  ref: RecordedEventRef;
  label: string;
  at: Date;
  repository: string | null;
  outcome: DryRunOutcome;
  reason: string;
  /** Other rules matched the same failure: who fires, and why (null when this rule was alone). */
  precedence: string | null;
  candidate: Pick<Candidate, "taskKind" | "action" | "dedupeKey" | "source" | "reason" | "matchedOn" | "keyVerdicts" | "gaps"> | null;
  duplicateOf: { runId: string; number: number } | { event: string } | null;
};

const pick = (c: Candidate): NonNullable<DryRunEvent["candidate"]> => ({
  taskKind: c.taskKind,
  action: c.action,
  dedupeKey: c.dedupeKey,
  source: c.source,
  reason: c.reason,
  matchedOn: c.matchedOn,
  keyVerdicts: c.keyVerdicts,
  gaps: c.gaps,
});

export async function dryRunTriggerRule(opts: { db: Db; actor: UserActor; input: unknown; limit?: number }) {
  const { db, actor } = opts;
  const { ruleId, rule: values } = parseInput(zDryRunInput, opts.input);
  const scope =
    values.repositoryId !== null
      ? (await requireRepositoryRoleOf(db, actor, values.repositoryId, "viewer", "dry-run a rule on this repository"), [values.repositoryId])
      : await visibleRepositoryIds(db, actor);
  // A disabled rule is tried as if enabled: the dry run answers "what would it do".
  const rule: TriggerRule = { ...values, id: ruleId ?? "new-rule", enabled: true };
  const events = await recentRecordedEvents({ db, repositoryIds: scope, limit: opts.limit ?? 40 });

  // The rules each repository's events are planned with: its live rules, this one in place of its saved version.
  const rulesets = new Map<string, TriggerRule[]>();
  const rulesFor = async (repositoryId: string) => {
    let rules = rulesets.get(repositoryId);
    if (!rules) {
      const live: TriggerRule[] = (await liveRulesFor(db, repositoryId)).filter((r) => r.id !== rule.id);
      // A new rule is the newest: it loses ties to every saved rule, as it will once saved.
      const mine = rule.repositoryId === null || rule.repositoryId === repositoryId;
      rules = mine ? (ruleId === null ? [...live, rule] : insertInOrder(live, rule, await savedOrder(db, ruleId))) : live;
      rulesets.set(repositoryId, rules);
    }
    return rules;
  };

  const planned = [];
  for (const event of events) {
    if (!event.ok) planned.push({ event, plan: null });
    else planned.push({ event, plan: planEvaluation(event, await rulesFor(event.repository.id)) });
  }
  const keys = planned.flatMap((p) => p.plan?.fire.filter((c) => c.ruleId === rule.id).map((c) => c.dedupeKey) ?? []);
  const existing = await heldKeys(db, keys);

  // The live path evaluates oldest first: an earlier event takes the key.
  const firstHolder = new Map<string, string>();
  const out: DryRunEvent[] = [];
  let otherKinds = 0;
  for (const { event, plan } of [...planned].reverse()) {
    const base = { ref: event.ref, label: event.label, at: event.at, precedence: null, candidate: null, duplicateOf: null };
    if (!event.ok) {
      out.push({ ...base, repository: event.repositoryName, outcome: "unusable", reason: event.problem });
      continue;
    }
    const repository = event.repository.fullName;
    if (plan === null || plan.triggerKind !== rule.kind) {
      otherKinds++;
      continue;
    }
    if (plan.refusal !== null) {
      out.push({ ...base, repository, outcome: "refused", reason: plan.refusal });
      continue;
    }
    const firing = plan.fire.find((c) => c.ruleId === rule.id);
    const superseded = plan.superseded.find((s) => s.candidate.ruleId === rule.id);
    if (superseded) {
      const precedence = plan.fire.find((c) => c.dedupeKey === superseded.by.dedupeKey)?.precedence?.why ?? null;
      out.push({ ...base, repository, outcome: "superseded", reason: superseded.why, precedence, candidate: pick(superseded.candidate) });
      continue;
    }
    if (!firing) {
      const skip = plan.skipped.find((s) => s.ruleId === rule.id) ?? plan.skipped.find((s) => s.ruleId === null);
      out.push({ ...base, repository, outcome: "skipped", reason: skip?.reason ?? "no match" });
      continue;
    }
    const precedence = firing.precedence?.why ?? null;
    const run = existing.get(firing.dedupeKey);
    const holder = firstHolder.get(firing.dedupeKey);
    if (run) {
      out.push({ ...base, repository, outcome: "duplicate", reason: `run #${run.number} already holds this dedupe key`, precedence, candidate: pick(firing), duplicateOf: { runId: run.id, number: run.number } });
    } else if (holder) {
      out.push({ ...base, repository, outcome: "duplicate", reason: `an earlier event in this list takes the key: ${holder}`, precedence, candidate: pick(firing), duplicateOf: { event: holder } });
    } else {
      firstHolder.set(firing.dedupeKey, event.label);
      out.push({ ...base, repository, outcome: "create", reason: firing.reason, precedence, candidate: pick(firing) });
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
    summary: {
      create: count("create"),
      duplicate: count("duplicate"),
      superseded: count("superseded"),
      skipped: count("skipped"),
      refused: count("refused"),
      unusable: count("unusable"),
    },
  };
}

/** The saved rule's place in the live order (createdAt, id): ties in precedence go to the older rule. */
async function savedOrder(db: Db, ruleId: string) {
  return db.triggerRule.findUnique({ where: { id: ruleId }, select: { createdAt: true } });
}

function insertInOrder(live: TriggerRule[], rule: TriggerRule, saved: { createdAt: Date } | null): TriggerRule[] {
  if (!saved) return [...live, rule];
  // liveRulesFor orders by createdAt then id; the saved rows carry createdAt.
  const at = live.findIndex((r) => {
    const created = (r as TriggerRule & { createdAt?: Date }).createdAt;
    return created !== undefined && (created > saved.createdAt || (created.getTime() === saved.createdAt.getTime() && r.id > rule.id));
  });
  return at === -1 ? [...live, rule] : [...live.slice(0, at), rule, ...live.slice(at)];
}
