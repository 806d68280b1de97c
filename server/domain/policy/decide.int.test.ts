import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";
import { decide, recheckDecision } from "./decide";
import { factsFrom } from "./facts";
import { PolicyFactError } from "./fact-check";
import type { PolicyDefinition } from "./model";
import { proofLeaves } from "./proof";
import { ciTriagePolicy, shippedPolicies } from "./shipped";
import { getPolicy, savePolicyVersion } from "./store";

const decisionCount = () => getDb().policyDecision.count();

async function saveTriage(edit: (definition: PolicyDefinition) => void) {
  const db = getDb();
  const admin = await createUser({ isAdmin: true });
  const current = await getPolicy({ db, kind: "ci_triage" });
  const definition = structuredClone(current.current.definition);
  edit(definition);
  return savePolicyVersion({
    db,
    actor: { userId: admin.id, label: admin.email },
    kind: "ci_triage",
    definition,
    expectedVersion: current.version,
  });
}

describe("decide", () => {
  it("on a fresh database creates the shipped policies, then stores the decision with facts, proof and version", async () => {
    const db = getDb();
    expect(await db.policy.count()).toBe(0);
    const facts = { ...factsFrom("webhook", { failing_stage: "test", prior_reruns: 0 }), ...factsFrom("person", { known_flaky: true }) };

    const made = await decide({ db, kind: "ci_triage", facts, subject: "build_failure:job-1" });

    expect(await db.policy.count()).toBe(Object.keys(shippedPolicies).length);
    const version = await db.policyVersion.findFirstOrThrow({ where: { policy: { kind: "ci_triage" } } });
    expect(made.decision).toMatchObject({
      policy: { kind: "ci_triage", version: 1, digest: version.digest },
      property: "disposition",
      value: "rerun_once",
      rule: "flaky_test_gets_one_rerun",
    });
    const row = await db.policyDecision.findUniqueOrThrow({ where: { id: made.id } });
    expect(row).toMatchObject({
      policyVersionId: version.id,
      runId: null,
      subject: "build_failure:job-1",
      property: "disposition",
      value: "rerun_once",
      ruleName: "flaky_test_gets_one_rerun",
      facts,
    });
    expect(row.proof).toEqual(made.decision.proof);
    const proof = made.decision.proof;
    expect(proof.via).toBe("rule");
    if (proof.via !== "rule") return;
    // Provenance on every leaf: the webhook's, the person's, and the closed world for the absent fact.
    expect(proofLeaves(proof.tree).map((l) => [l.property, l.source, l.holds])).toEqual([
      ["reproduces_on_rerun", "closed_world", true],
      ["failing_stage", "webhook", true],
      ["known_flaky", "person", true],
      ["prior_reruns", "webhook", true],
    ]);
  });

  it("writes exactly one PolicyDecision row per call, the fail-closed default included", async () => {
    const db = getDb();
    const before = await decisionCount();
    const calls = [
      { kind: "ci_triage" as const, facts: factsFrom("webhook", { failing_stage: "deploy" }) },
      { kind: "change_gate" as const, facts: factsFrom("api", {}) },
      { kind: "change_gate" as const, facts: factsFrom("api", { kind: "publish_release" }) },
      { kind: "runner_selection" as const, facts: factsFrom("webhook", { is_fork: true }), property: "pool_trust_tier" },
      { kind: "runner_selection" as const, facts: factsFrom("webhook", { is_fork: true }), property: "privileged_credentials" },
    ];
    const made = [];
    for (const [i, call] of calls.entries()) {
      made.push(await decide({ db, ...call, subject: `subject-${i}` }));
      expect(await decisionCount()).toBe(before + i + 1);
    }
    expect(new Set(made.map((m) => m.id)).size).toBe(calls.length);
    expect(made.every((m) => m.decision.rule !== null)).toBe(true);

    // The shipped policies cover every fact set, so reach the default with a version without rules.
    await saveTriage((d) => {
      d.rules = [];
    });
    const fallback = await decide({ db, kind: "ci_triage", facts: factsFrom("webhook", { failing_stage: "lint" }), subject: "no-rules" });
    expect(await decisionCount()).toBe(before + calls.length + 1);
    expect(fallback.decision).toMatchObject({ value: "escalate_to_owner", rule: null, proof: { via: "default", unmatched: [] } });
    const row = await db.policyDecision.findUniqueOrThrow({ where: { id: fallback.id } });
    expect(row).toMatchObject({ ruleName: null, value: "escalate_to_owner", proof: { via: "default" }, policyVersionId: fallback.policyVersionId });

    // Restore the rules so the later tests decide with them.
    await saveTriage((d) => {
      d.rules = structuredClone(ciTriagePolicy.rules);
    });
  });

  it("refuses facts the model forbids: throws naming the constraint and stores nothing", async () => {
    const db = getDb();
    const before = await decisionCount();
    const attempt = decide({
      db,
      kind: "ci_triage",
      facts: factsFrom("api", { failing_stage: "test", disposition: "rerun_once" }),
      subject: "forged",
    });
    await expect(attempt).rejects.toBeInstanceOf(PolicyFactError);
    await expect(attempt).rejects.toMatchObject({ code: "UNPROCESSABLE", reason: "provenance_refused", property: "disposition" });
    await expect(
      decide({ db, kind: "ci_triage", facts: factsFrom("api", { known_flaky: true }), subject: "missing-stage" }),
    ).rejects.toMatchObject({ reason: "cardinality" });
    await expect(decide({ db, kind: "ci_triage", facts: {}, subject: "  " })).rejects.toMatchObject({ reason: "missing_subject" });
    expect(await decisionCount()).toBe(before);
  });

  it("uses a newly saved version on the next call, and names it on the row", async () => {
    const db = getDb();
    const facts = factsFrom("webhook", { failing_stage: "deploy" });
    const first = await decide({ db, kind: "ci_triage", facts, subject: "before-save" });
    const saved = await saveTriage((d) => {
      d.rules.push({
        name: "deploy_failure_escalates",
        priority: 200,
        when: { property: "failing_stage", is: "deploy" },
        then: { property: "disposition", value: "escalate_to_owner" },
        explanation: "Deploys go to a person.",
      });
    });
    const second = await decide({ db, kind: "ci_triage", facts, subject: "after-save" });
    expect(second.decision).toMatchObject({ value: "escalate_to_owner", rule: "deploy_failure_escalates", policy: { version: saved.policy.version } });
    expect(second.policyVersionId).toBe(saved.policy.current.id);
    expect(second.policyVersionId).not.toBe(first.policyVersionId);
  });

  it("refuses a stored version whose definition no longer matches its digest", async () => {
    const db = getDb();
    // A policy row whose version is missing, then one whose definition does not match its digest.
    await db.policy.deleteMany({ where: { kind: "attribution" } });
    const policy = await db.policy.create({ data: { kind: "attribution", name: "Attribution", version: 1 } });
    await expect(decide({ db, kind: "attribution", facts: {}, subject: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const definition = structuredClone((await getPolicy({ db, kind: "ci_triage" })).current.definition);
    await db.policyVersion.create({
      data: { policyId: policy.id, version: 1, definition: { ...definition, kind: "attribution" }, digest: "sha256:not-it" },
    });
    const before = await decisionCount();
    await expect(decide({ db, kind: "attribution", facts: factsFrom("api", { failing_stage: "lint" }), subject: "x" })).rejects.toMatchObject({
      code: "INTERNAL",
      reason: "policy_digest_mismatch",
    });
    expect(await decisionCount()).toBe(before);
  });
});

describe("recheckDecision", () => {
  it("gives the same result from the stored version even after a newer version is saved", async () => {
    const db = getDb();
    const facts = factsFrom("webhook", { failing_stage: "build", known_flaky: false });
    const made = await decide({ db, kind: "ci_triage", facts, subject: "recheck-me" });
    expect(made.decision.rule).toBe("deterministic_failure_fixes_forward");
    await saveTriage((d) => {
      d.rules = d.rules.filter((r) => r.name !== "deterministic_failure_fixes_forward");
    });

    const stored = await recheckDecision({ db, decisionId: made.id });
    expect(stored).toMatchObject({
      matches: true,
      policyChanged: false,
      refused: [],
      against: "stored",
      version: { id: made.policyVersionId, version: made.decision.policy.version },
      current: { value: "fix_forward", rule: "deterministic_failure_fixes_forward", proof: made.decision.proof },
    });

    const today = await recheckDecision({ db, decisionId: made.id, against: "current" });
    expect(today).toMatchObject({ matches: false, policyChanged: true, against: "current", current: { value: "escalate_to_owner", rule: null } });
    await expect(recheckDecision({ db, decisionId: "nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("proofs router", () => {
  it("shows a run's decisions to its repository's viewers only; others are refused", async () => {
    const db = getDb();
    const viewer = await createUser();
    const stranger = await createUser();
    const repo = await createRepository({ members: [[viewer, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id });
    const made = await decide({ db, kind: "change_gate", facts: factsFrom("api", { kind: "comment" }), runId: run.id, subject: "write_back:1" });
    const loose = await decide({ db, kind: "change_gate", facts: factsFrom("api", { kind: "review" }), subject: "editor" });

    const list = await callerFor(viewer).proofs.byRun({ runId: run.id });
    expect(list.map((d) => [d.id, d.subject, d.decision.value, d.decision.policy.kind])).toEqual([[made.id, "write_back:1", true, "change_gate"]]);
    expect(await callerFor(viewer).proofs.byId({ decisionId: made.id })).toMatchObject({ id: made.id, runId: run.id, decision: made.decision });
    expect(await callerFor(viewer).proofs.recheck({ decisionId: made.id })).toMatchObject({ matches: true });

    await expect(callerFor(stranger).proofs.byRun({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(stranger).proofs.byId({ decisionId: made.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(stranger).proofs.recheck({ decisionId: made.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    // A decision outside any run: anyone with a role on some repository; not an account with none,
    // nobody signed out.
    expect(await callerFor(viewer).proofs.byId({ decisionId: loose.id })).toMatchObject({ id: loose.id, runId: null });
    await expect(callerFor(stranger).proofs.byId({ decisionId: loose.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(null).proofs.byId({ decisionId: loose.id })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(callerFor(viewer).proofs.byId({ decisionId: "missing" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
