import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createUser } from "@/server/testing/factories";
import { policyDigest } from "./digest";
import type { PolicyDefinition } from "./model";
import { ciTriagePolicy, shippedPolicies } from "./shipped";
import {
  diffPolicyVersions,
  ensureShippedPolicies,
  getPolicy,
  listPolicies,
  listPolicyVersions,
  savePolicyVersion,
  upgradeShippedPolicies,
} from "./store";
import { PolicyDefinitionError } from "./validate";

const triage = (): PolicyDefinition => structuredClone(ciTriagePolicy);
/** An editable copy of the current ci_triage definition. */
const currentTriage = async (): Promise<PolicyDefinition> =>
  structuredClone((await getPolicy({ db: getDb(), kind: "ci_triage" })).current.definition);

async function admin() {
  const user = await createUser({ isAdmin: true });
  return { userId: user.id, label: user.email };
}

async function counts(kind: "ci_triage" | "change_gate" = "ci_triage") {
  const db = getDb();
  return {
    versions: await db.policyVersion.count({ where: { policy: { kind } } }),
    audits: await db.auditEntry.count({ where: { action: "policy.save" } }),
    version: (await db.policy.findUniqueOrThrow({ where: { kind } })).version,
  };
}

describe("ensureShippedPolicies", () => {
  it("creates each shipped policy at version 1 once, and is a no-op after (also when racing)", async () => {
    const db = getDb();
    const results = await Promise.all([ensureShippedPolicies(db), ensureShippedPolicies(db), ensureShippedPolicies(db)]);
    expect(results.flatMap((r) => r.created).sort()).toEqual(Object.keys(shippedPolicies).sort());
    expect(await ensureShippedPolicies(db)).toEqual({ created: [] });

    const policies = await db.policy.findMany({ include: { versions: true } });
    expect(policies).toHaveLength(Object.keys(shippedPolicies).length);
    for (const policy of policies) {
      expect(policy.version).toBe(1);
      expect(policy.versions.map((v) => v.version)).toEqual([1]);
      const shipped = shippedPolicies[policy.kind as keyof typeof shippedPolicies];
      expect(policy.versions[0]?.digest).toBe(policyDigest(shipped));
      expect(policy.name).toBe(shipped.name);
    }
  });

  it("never overwrites a policy an admin has edited", async () => {
    const db = getDb();
    await ensureShippedPolicies(db);
    const edited = triage();
    edited.rules[0]!.priority = 99;
    await savePolicyVersion({ db, actor: await admin(), kind: "ci_triage", definition: edited, expectedVersion: (await counts()).version });
    const before = await counts();
    expect(await ensureShippedPolicies(db)).toEqual({ created: [] });
    expect(await counts()).toEqual(before);
    expect((await getPolicy({ db, kind: "ci_triage" })).current.definition.rules[0]?.priority).toBe(99);
  });
});

describe("savePolicyVersion", () => {
  it("appends a version, bumps the policy and writes an audit entry naming what changed", async () => {
    const db = getDb();
    const actor = await admin();
    const before = await counts();
    const edited = await currentTriage();
    edited.rules[1]!.explanation = "A listed-flaky test that has not been rerun gets one rerun.";
    edited.rules.push({
      name: "lint_failure_fixes_forward",
      priority: 11,
      when: { property: "failing_stage", is: "lint" },
      then: { property: "disposition", value: "fix_forward" },
      explanation: "Lint failures are always fixed forward.",
    });

    const saved = await savePolicyVersion({ db, actor, kind: "ci_triage", definition: edited, expectedVersion: before.version });

    expect(saved.policy.version).toBe(before.version + 1);
    expect(saved.policy.current).toMatchObject({ version: before.version + 1, digest: policyDigest(edited), createdById: actor.userId });
    expect(saved.diff.rules.added.map((r) => r.name)).toEqual(["lint_failure_fixes_forward"]);
    expect(saved.diff.rules.changed).toEqual([
      { name: "flaky_test_gets_one_rerun", changes: [expect.objectContaining({ field: "explanation" })] },
    ]);
    expect(await counts()).toEqual({ versions: before.versions + 1, audits: before.audits + 1, version: before.version + 1 });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { action: "policy.save" }, orderBy: { createdAt: "desc" } });
    expect(audit).toMatchObject({
      actorUserId: actor.userId,
      objectType: "Policy",
      objectId: saved.policy.id,
      detail: {
        kind: "ci_triage",
        fromVersion: before.version,
        toVersion: before.version + 1,
        rules: { added: ["lint_failure_fixes_forward"], removed: [], changed: ["flaky_test_gets_one_rerun"] },
      },
    });
    // The stored JSON parses back to exactly what was saved.
    expect((await getPolicy({ db, kind: "ci_triage" })).current.definition).toEqual(edited);
  });

  it("refuses a stale expectedVersion with what changed, and writes nothing", async () => {
    const db = getDb();
    const actor = await admin();
    const { version } = await counts();
    const first = await currentTriage();
    first.rules[0]!.explanation = "Roll back first, investigate second.";
    await savePolicyVersion({ db, actor, kind: "ci_triage", definition: first, expectedVersion: version });
    const before = await counts();

    const second = await currentTriage();
    second.rules[0]!.priority = 120;
    const refused = savePolicyVersion({ db, actor, kind: "ci_triage", definition: second, expectedVersion: version });
    await expect(refused).rejects.toMatchObject({
      code: "CONFLICT",
      reason: "stale_version",
      message: expect.stringContaining(`is at version ${version + 1}, not ${version}`),
      details: {
        expectedVersion: version,
        currentVersion: version + 1,
        savedBy: actor.label,
        diff: { rules: { changed: [{ name: "deploy_failure_rolls_back", changes: [expect.objectContaining({ field: "explanation" })] }] } },
      },
    });
    expect(await counts()).toEqual(before);
  });

  it("refuses a definition that violates its model, naming each issue, and writes nothing", async () => {
    const db = getDb();
    const before = await counts();
    const broken = triage();
    broken.rules[0]!.then = { property: "disposition", value: "ignore" };
    broken.rules[2]!.when = { property: "disposition", is: "roll_back" };
    const refused = savePolicyVersion({ db, actor: await admin(), kind: "ci_triage", definition: broken, expectedVersion: before.version });
    await expect(refused).rejects.toBeInstanceOf(PolicyDefinitionError);
    const err = (await refused.catch((e: unknown) => e)) as PolicyDefinitionError;
    expect(err.code).toBe("UNPROCESSABLE");
    expect(err.issues.map((i) => [i.rule, i.constraint])).toEqual([
      ["deploy_failure_rolls_back", "value_not_in_enum"],
      ["flaky_failure_reproduced_escalates", "condition_on_rules_only"],
    ]);
    expect(err.message).toMatch(/"ignore" is not one of disposition's values/);
    expect(await counts()).toEqual(before);
  });

  it("refuses a schema-invalid definition, a definition for another kind, and an unchanged one", async () => {
    const db = getDb();
    const actor = await admin();
    const before = await counts();
    const { version } = before;
    await expect(
      savePolicyVersion({ db, actor, kind: "ci_triage", definition: { ...triage(), rules: "none" }, expectedVersion: version }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE", issues: [expect.objectContaining({ constraint: "schema", path: ["rules"] })] });
    await expect(
      savePolicyVersion({ db, actor, kind: "change_gate", definition: triage(), expectedVersion: 1 }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE", reason: "kind_mismatch" });
    const current = (await getPolicy({ db, kind: "ci_triage" })).current.definition;
    await expect(
      savePolicyVersion({ db, actor, kind: "ci_triage", definition: structuredClone(current), expectedVersion: version }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", reason: "unchanged" });
    expect(await counts()).toEqual(before);
  });

  it("two admins saving from the same version: exactly one wins, the other gets CONFLICT", async () => {
    const db = getDb();
    const [a, b] = [await admin(), await admin()];
    const before = await counts();
    const mine = triage();
    mine.rules[3]!.priority = 12;
    const theirs = triage();
    theirs.rules[3]!.priority = 13;
    const results = await Promise.allSettled([
      savePolicyVersion({ db, actor: a, kind: "ci_triage", definition: mine, expectedVersion: before.version }),
      savePolicyVersion({ db, actor: b, kind: "ci_triage", definition: theirs, expectedVersion: before.version }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "CONFLICT" } });
    expect(await counts()).toEqual({ versions: before.versions + 1, audits: before.audits + 1, version: before.version + 1 });
  });
});

describe("reading policies", () => {
  it("lists policies with rule counts and check results, versions newest first, and diffs two versions", async () => {
    const db = getDb();
    const list = await listPolicies({ db });
    expect(list.map((p) => p.kind)).toEqual(["ci_triage", "change_gate", "runner_selection", "attribution"]);
    const gate = list.find((p) => p.kind === "change_gate");
    expect(gate).toMatchObject({ version: 1, ruleCount: shippedPolicies.change_gate.rules.length, subject: "write_back" });
    expect(gate?.review).toMatchObject({ issues: [], checks: { conflicts: [], gaps: [], vacuous: [] } });

    const actor = await admin();
    const edited = structuredClone(shippedPolicies.change_gate) as PolicyDefinition;
    edited.rules = edited.rules.filter((r) => r.name !== "diagnosis_comment_allowed");
    edited.defaults[0]!.explanation = "Nothing cleared it: a person approves.";
    await savePolicyVersion({ db, actor, kind: "change_gate", definition: edited, expectedVersion: 1 });

    const versions = await listPolicyVersions({ db, kind: "change_gate" });
    expect(versions.map((v) => [v.version, v.createdBy?.email ?? null, v.ruleCount])).toEqual([
      [2, actor.label, edited.rules.length],
      [1, null, edited.rules.length + 1],
    ]);

    const diff = await diffPolicyVersions({ db, kind: "change_gate", from: 1, to: 2 });
    expect(diff).toMatchObject({ from: { version: 1 }, to: { version: 2 }, changed: true, meta: [] });
    expect(diff.rules.removed.map((r) => r.name)).toEqual(["diagnosis_comment_allowed"]);
    expect(diff.rules.removed[0]?.summary).toMatch(/^priority 60: when all\(kind is comment, .*\) then approval_required = false$/);
    expect(diff.defaults).toEqual([
      { property: "approval_required", changes: [{ field: "explanation", before: shippedPolicies.change_gate.defaults[0]!.explanation, after: "Nothing cleared it: a person approves." }] },
    ]);
    // After the removal, the remaining rules are now checked without it.
    expect((await listPolicies({ db })).find((p) => p.kind === "change_gate")?.ruleCount).toBe(edited.rules.length);
    await expect(diffPolicyVersions({ db, kind: "change_gate", from: 1, to: 9 })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("upgradeShippedPolicies", () => {
  it("brings a shipped policy nobody edited up to this build's text once (also when racing), and leaves a person's edit alone", async () => {
    const db = getDb();
    await ensureShippedPolicies(db);
    const shipped = shippedPolicies.attribution;
    const dropped = shipped.rules.at(-1)!.name;
    // What an earlier build shipped: the same policy without its last rule, written by Airlock.
    const older = structuredClone(shipped) as PolicyDefinition;
    older.rules = older.rules.slice(0, -1);
    const policy = await db.policy.findUniqueOrThrow({ where: { kind: "attribution" } });
    await db.policyVersion.create({ data: { policyId: policy.id, version: policy.version + 1, definition: older as object, digest: policyDigest(older), createdById: null } });
    await db.policy.update({ where: { id: policy.id }, data: { version: policy.version + 1 } });

    const results = await Promise.all([upgradeShippedPolicies(db), upgradeShippedPolicies(db), upgradeShippedPolicies(db)]);
    expect(results.flatMap((r) => r.upgraded)).toEqual(["attribution"]);
    const now = await getPolicy({ db, kind: "attribution" });
    expect(now).toMatchObject({ version: policy.version + 2, current: { digest: policyDigest(shipped), createdById: null } });
    const audits = await db.auditEntry.findMany({ where: { action: "policy.upgrade", objectId: policy.id } });
    expect(audits).toHaveLength(1);
    expect(audits[0]!.detail).toMatchObject({ fromVersion: policy.version + 1, toVersion: policy.version + 2, rules: { added: [dropped], removed: [], changed: [] } });
    expect((await upgradeShippedPolicies(db)).upgraded).toEqual([]);
    expect((await listPolicies({ db })).find((p) => p.kind === "attribution")!.fromShipped).toBeNull();

    // A person's edit is theirs: never replaced, and the list says how it differs from the shipped text.
    const edited = structuredClone(shipped) as PolicyDefinition;
    edited.rules = edited.rules.slice(0, -1);
    await savePolicyVersion({ db, actor: await admin(), kind: "attribution", definition: edited, expectedVersion: now.version });
    expect((await upgradeShippedPolicies(db)).upgraded).toEqual([]);
    expect((await getPolicy({ db, kind: "attribution" })).current.digest).toBe(policyDigest(edited));
    expect((await listPolicies({ db })).find((p) => p.kind === "attribution")!.fromShipped).toEqual({ added: [], removed: [dropped], changed: [] });
  });
});
