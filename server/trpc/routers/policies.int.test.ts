import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { factsFrom } from "@/server/domain/policy/facts";
import type { PolicyDefinition } from "@/server/domain/policy/model";
import { proofLeaves } from "@/server/domain/policy/proof";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

async function editableTriage(): Promise<{ definition: PolicyDefinition; version: number }> {
  const admin = await createUser({ isAdmin: true });
  const policy = await callerFor(admin).policies.byKind({ kind: "ci_triage" });
  return { definition: structuredClone(policy.current.definition), version: policy.version };
}

const savedCount = async () => ({
  versions: await getDb().policyVersion.count(),
  audits: await getDb().auditEntry.count({ where: { action: "policy.save" } }),
});

describe("policies router", () => {
  it("an anonymous caller gets UNAUTHORIZED everywhere", async () => {
    const anonymous = callerFor(null);
    await expect(anonymous.policies.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(anonymous.policies.byKind({ kind: "ci_triage" })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const { definition } = await editableTriage();
    await expect(anonymous.policies.save({ kind: "ci_triage", expectedVersion: 1, definition })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });

  it("a repository maintainer reads and tries policies but cannot save; nothing is written", async () => {
    const maintainer = await createUser();
    await createRepository({ members: [[maintainer, "maintainer"]] });
    const caller = callerFor(maintainer);
    const list = await caller.policies.list();
    expect(list.map((p) => [p.kind, p.version, p.review.issues.length])).toEqual([
      ["ci_triage", 1, 0],
      ["change_gate", 1, 0],
      ["runner_selection", 1, 0],
      ["attribution", 1, 0],
    ]);
    const policy = await caller.policies.byKind({ kind: "ci_triage" });
    expect(policy).toMatchObject({ kind: "ci_triage", canEdit: false, review: { checks: { conflicts: [] } } });

    const before = await savedCount();
    const definition = structuredClone(policy.current.definition);
    definition.rules[0]!.priority = 101;
    await expect(caller.policies.save({ kind: "ci_triage", expectedVersion: policy.version, definition })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await savedCount()).toEqual(before);
  });

  it("the live check reports an overlap with its example and the rule priority picks", async () => {
    const viewer = await createUser();
    await createRepository({ members: [[viewer, "viewer"]] });
    const { definition } = await editableTriage();
    // The deploy rule now fires on test failures too: it overlaps the flaky-rerun rule.
    definition.rules[0]!.when = { property: "failing_stage", inList: ["deploy", "test"] };
    const review = await callerFor(viewer).policies.check({ definition });
    expect(review.issues).toEqual([]);
    const conflict = review.checks?.conflicts.find((c) => c.rules.includes("flaky_test_gets_one_rerun"));
    expect(conflict).toMatchObject({
      rules: ["deploy_failure_rolls_back", "flaky_test_gets_one_rerun"],
      conclusions: ["roll_back", "rerun_once"],
      picked: "deploy_failure_rolls_back",
      decidedBy: "priority",
      region: { example: expect.objectContaining({ failing_stage: "test", known_flaky: true }) },
    });
    // The old deploy-only rule and the rerun rule no longer win anywhere they both match.
    expect(review.checks?.vacuous.map((v) => v.rule)).toContain("flaky_test_gets_one_rerun");

    definition.rules[1]!.name = definition.rules[0]!.name;
    const broken = await callerFor(viewer).policies.check({ definition });
    expect(broken.checks).toBeNull();
    expect(broken.issues).toEqual([expect.objectContaining({ constraint: "duplicate_rule", rule: "deploy_failure_rolls_back" })]);
  });

  it("tryIt evaluates an unsaved definition with its proof and provenance, and stores nothing", async () => {
    const viewer = await createUser();
    await createRepository({ members: [[viewer, "viewer"]] });
    const { definition } = await editableTriage();
    definition.rules[0]!.when = { property: "failing_stage", inList: ["deploy", "test"] };
    const before = await getDb().policyDecision.count();
    const facts = { ...factsFrom("webhook", { failing_stage: "test", prior_reruns: 0 }), ...factsFrom("person", { known_flaky: true }) };

    const unsaved = await callerFor(viewer).policies.tryIt({ kind: "ci_triage", definition, facts });
    expect(unsaved.refused).toEqual([]);
    expect(unsaved.decisions).toHaveLength(1);
    const decision = unsaved.decisions[0]!;
    expect(decision).toMatchObject({ value: "roll_back", rule: "deploy_failure_rolls_back", policy: { version: null } });
    if (decision.proof.via !== "rule") throw new Error("expected a rule proof");
    expect(proofLeaves(decision.proof.tree)).toEqual([expect.objectContaining({ property: "failing_stage", seen: "test", source: "webhook", holds: true })]);

    const saved = await callerFor(viewer).policies.tryIt({ kind: "ci_triage", facts });
    expect(saved.decisions[0]).toMatchObject({ value: "rerun_once", policy: { version: 1 } });

    const refused = await callerFor(viewer).policies.tryIt({ kind: "ci_triage", facts: { ...facts, ...factsFrom("api", { disposition: "roll_back" }) } });
    expect(refused).toMatchObject({ decisions: [], refused: [{ constraint: "provenance_refused", property: "disposition" }] });
    expect(await getDb().policyDecision.count()).toBe(before);

    definition.rules[0]!.then = { property: "disposition", value: "nope" };
    await expect(callerFor(viewer).policies.tryIt({ kind: "ci_triage", definition, facts })).rejects.toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
    });
  });

  it("an admin saves; a stale version and a model violation are refused with their reasons", async () => {
    const admin = await createUser({ isAdmin: true });
    const caller = callerFor(admin);
    const { definition, version } = await editableTriage();
    definition.rules[3]!.explanation = "A genuine failure: the agent may propose a fix.";
    const saved = await caller.policies.save({ kind: "ci_triage", expectedVersion: version, definition });
    expect(saved.policy.version).toBe(version + 1);

    const versions = await caller.policies.versions({ kind: "ci_triage" });
    expect(versions.map((v) => v.version)).toEqual([version + 1, version]);
    const diff = await caller.policies.diff({ kind: "ci_triage", from: version, to: version + 1 });
    expect(diff.rules.changed).toEqual([
      { name: "deterministic_failure_fixes_forward", changes: [expect.objectContaining({ field: "explanation", after: definition.rules[3]!.explanation })] },
    ]);

    const before = await savedCount();
    definition.rules[3]!.priority = 5;
    const stale = await caller.policies.save({ kind: "ci_triage", expectedVersion: version, definition }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(TRPCError);
    expect(stale).toMatchObject({ code: "CONFLICT", message: expect.stringContaining(`at version ${version + 1}, not ${version}`) });

    definition.rules[3]!.when = { property: "prior_reruns", below: -1 };
    definition.rules[3]!.then = { property: "known_flaky", value: true };
    const invalid = await caller.policies.save({ kind: "ci_triage", expectedVersion: version + 1, definition }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      cause: { reason: "invalid_policy", details: { issues: [expect.objectContaining({ constraint: "conclusion_not_rules_only" })] } },
    });
    expect(await savedCount()).toEqual(before);
  });
});
