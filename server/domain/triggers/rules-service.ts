import { transaction, type Db, type TriggerRule as TriggerRuleRow } from "@/server/db";
import { enqueue } from "@/server/queue/enqueue";
import { AppError } from "@/server/errors";
import { recordAudit } from "../audit";
import { requireAdmin, requireRepositoryRoleOf } from "../access";
import { auditActorOf, type UserActor } from "../actor";
import { fieldError, parseInput } from "../input";
import { refusableTransaction, type Refuse } from "../refusable";
import { changedFields, staleVersionError } from "../versioned";
import { zTriggerRuleInput, zUpdateTriggerRuleInput, type TriggerRuleInput } from "./forms/schemas";
import { floorToMinute, parseScanSchedule } from "./flaky-scan";
import { validateTriggerRule } from "./trigger-rule";

// Creating, changing and deleting trigger rules. A rule of one repository is its maintainers' to
// change; a rule for every repository (no repository) is an Airlock admin's. Each change and its
// audit entry (the changed fields, before and after) commit together; a save names the version it
// was made from and a newer version refuses it with what changed.

export const RULE_FIELDS = [
  "name",
  "kind",
  "repositoryId",
  "workflow",
  "job",
  "step",
  "branchGlob",
  "pathFilters",
  "failureSignature",
  "releaseVersion",
  "releaseChart",
  "releaseNpmPackage",
  "releaseImage",
  "releaseChecksum",
  "releaseBranch",
  "stackId",
  "taskKind",
  "action",
  "alsoFire",
  "scanSchedule",
  "scanWindowHours",
  "scanThreshold",
  "enabled",
] as const satisfies readonly (keyof TriggerRuleInput & keyof TriggerRuleRow)[];

const valuesOf = (row: TriggerRuleRow): TriggerRuleInput => Object.fromEntries(RULE_FIELDS.map((f) => [f, row[f]])) as TriggerRuleInput;

async function requireRuleScope(db: Db, actor: UserActor, repositoryId: string | null, what: string) {
  if (repositoryId === null) requireAdmin(actor, `${what} for every repository`);
  else await requireRepositoryRoleOf(db, actor, repositoryId, "maintainer", what);
}

async function checkStack(db: Db, stackId: string, refuse: Refuse, allowArchived = false) {
  const stack = await db.agentStack.findUnique({ where: { id: stackId }, select: { name: true, archivedAt: true } });
  if (!stack) refuse(fieldError("UNPROCESSABLE", "stackId", "No such stack.", "no_such_stack"));
  else if (stack.archivedAt && !allowArchived) {
    refuse(fieldError("UNPROCESSABLE", "stackId", `${stack.name} is archived: pick another stack.`, "stack_archived"));
  }
}

function checkProblems(values: TriggerRuleInput, id: string, refuse: Refuse) {
  const problems = validateTriggerRule({ ...values, id });
  if (values.scanSchedule !== null) {
    const parsed = parseScanSchedule(values.scanSchedule);
    if (typeof parsed === "string") refuse(fieldError("UNPROCESSABLE", "scanSchedule", `Not a schedule the worker can run: ${parsed}`, "invalid_schedule"));
  }
  if (problems.length > 0) {
    refuse(new AppError("UNPROCESSABLE", problems.join("; "), { reason: "invalid_trigger_rule", details: { problems } }));
  }
}

export async function createTriggerRule(opts: { db: Db; actor: UserActor; input: unknown }) {
  const values = parseInput(zTriggerRuleInput, opts.input);
  await requireRuleScope(opts.db, opts.actor, values.repositoryId, "create a trigger rule");
  return refusableTransaction(opts.db, "createTriggerRule", async (tx, refuse) => {
    await checkStack(tx, values.stackId, refuse);
    checkProblems(values, "new", refuse);
    const rule = await tx.triggerRule.create({ data: values });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "trigger_rule.create",
      objectType: "TriggerRule",
      objectId: rule.id,
      repositoryId: rule.repositoryId,
      detail: { toVersion: 1, changes: changedFields({} as TriggerRuleInput, values, RULE_FIELDS) },
    });
    return rule;
  });
}

async function lockRule(db: Db, ruleId: string, refuse: Refuse): Promise<TriggerRuleRow> {
  await db.$queryRaw`SELECT "id" FROM "TriggerRule" WHERE "id" = ${ruleId} FOR UPDATE`;
  const row = await db.triggerRule.findUnique({ where: { id: ruleId } });
  return row ?? refuse(new AppError("NOT_FOUND", "No such trigger rule.", { reason: "no_such_rule" }));
}

async function refuseIfStale(db: Db, row: TriggerRuleRow, expectedVersion: number, refuse: Refuse) {
  if (row.version === expectedVersion) return;
  refuse(
    await staleVersionError({
      db,
      objectType: "TriggerRule",
      objectId: row.id,
      what: `Rule ${row.name}`,
      expectedVersion,
      currentVersion: row.version,
      current: valuesOf(row),
    }),
  );
}

export async function updateTriggerRule(opts: { db: Db; actor: UserActor; input: unknown }) {
  const { ruleId, expectedVersion, ...values } = parseInput(zUpdateTriggerRuleInput, opts.input);
  return refusableTransaction(opts.db, "updateTriggerRule", async (tx, refuse) => {
    const row = await lockRule(tx, ruleId, refuse);
    await requireRuleScope(tx, opts.actor, row.repositoryId, "change this trigger rule");
    if (values.repositoryId !== row.repositoryId) await requireRuleScope(tx, opts.actor, values.repositoryId, "move a trigger rule");
    await refuseIfStale(tx, row, expectedVersion, refuse);
    const changes = changedFields(valuesOf(row), values, RULE_FIELDS);
    if (changes.length === 0) refuse(new AppError("BAD_REQUEST", `Nothing to save: this is version ${row.version}.`, { reason: "unchanged" }));
    // A rule may keep an archived stack only while it is disabled.
    await checkStack(tx, values.stackId, refuse, values.stackId === row.stackId && !values.enabled);
    checkProblems(values, row.id, refuse);
    const version = row.version + 1;
    const rule = await tx.triggerRule.update({ where: { id: row.id }, data: { ...values, version } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "trigger_rule.update",
      objectType: "TriggerRule",
      objectId: row.id,
      repositoryId: rule.repositoryId,
      detail: { fromVersion: row.version, toVersion: version, changes },
    });
    return rule;
  });
}

/** Deletes a rule; runs it made keep their history (their rule reference becomes empty). */
export async function deleteTriggerRule(opts: { db: Db; actor: UserActor; ruleId: string; expectedVersion: number }) {
  return refusableTransaction(opts.db, "deleteTriggerRule", async (tx, refuse) => {
    const row = await lockRule(tx, opts.ruleId, refuse);
    await requireRuleScope(tx, opts.actor, row.repositoryId, "delete this trigger rule");
    await refuseIfStale(tx, row, opts.expectedVersion, refuse);
    await tx.triggerRule.delete({ where: { id: row.id } });
    await recordAudit(tx, {
      actor: auditActorOf(opts.actor),
      action: "trigger_rule.delete",
      objectType: "TriggerRule",
      objectId: row.id,
      repositoryId: row.repositoryId,
      detail: { version: row.version, name: row.name, kind: row.kind },
    });
    return { id: row.id };
  });
}

/**
 * "Scan now" on a flaky-scan rule: queues its scan at this minute, with the same rights as
 * changing the rule (a twice-clicked button is one scan: the job key and the scan row are per
 * rule and minute). Audited with who asked.
 */
export async function requestFlakyScan(opts: { db: Db; actor: UserActor; ruleId: string; now?: Date }) {
  const rule = await opts.db.triggerRule.findUnique({ where: { id: opts.ruleId }, select: { id: true, name: true, kind: true, repositoryId: true, enabled: true } });
  if (!rule) throw new AppError("NOT_FOUND", "No such trigger rule.", { reason: "no_such_rule" });
  await requireRuleScope(opts.db, opts.actor, rule.repositoryId, "scan with this rule");
  if (rule.kind !== "flaky_scan") throw new AppError("UNPROCESSABLE", `${rule.name} is a ${rule.kind} rule: only flaky-scan rules scan.`, { reason: "not_a_flaky_scan_rule" });
  if (!rule.enabled) throw new AppError("PRECONDITION_FAILED", `${rule.name} is disabled: enable it to scan.`, { reason: "rule_disabled" });
  const at = floorToMinute(opts.now ?? new Date()).toISOString();
  return transaction(opts.db, "requestFlakyScan", async (tx) => {
    await enqueue(tx, "flaky.scan", { ruleId: rule.id, at, requestedBy: opts.actor.email }, { jobKey: `flaky.scan:${rule.id}:${at}`, maxAttempts: 3 });
    await recordAudit(tx, { actor: auditActorOf(opts.actor), action: "trigger_rule.scan", objectType: "TriggerRule", objectId: rule.id, repositoryId: rule.repositoryId, detail: { at } });
    return { ruleId: rule.id, at };
  });
}
