// The trigger rule form's procedures against a real database: create, edit, delete, validation
// from the form's schema, who may change which rule, stale edits, and the dry run compared with
// what the live trigger path (evaluateDelivery) then does on the same deliveries.
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { getDb } from "@/server/db";
import type { AppError } from "@/server/errors";
import { callHttp, evaluate, failedCheck, makeStack, recordFailure, ruleInput, sha, uid } from "@/server/testing/config-factories";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

const db = getDb();
let admin: SessionUser;
let maintainer: SessionUser;
let colleague: SessionUser;
let viewer: SessionUser;
let repo: Awaited<ReturnType<typeof createRepository>>;
let otherRepo: Awaited<ReturnType<typeof createRepository>>;
let stackId = "";

beforeAll(async () => {
  [admin, maintainer, colleague, viewer] = await Promise.all([createUser({ isAdmin: true }), createUser(), createUser(), createUser()]);
  repo = await createRepository({ members: [[maintainer, "maintainer"], [colleague, "maintainer"], [viewer, "viewer"]] });
  otherRepo = await createRepository();
  stackId = (await makeStack(db, admin)).id;
});

async function refusal(p: Promise<unknown>): Promise<TRPCError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCError);
  return err as TRPCError;
}

describe("trigger rule forms", () => {
  it("creates, edits and deletes a rule, with one audit entry per change", async () => {
    const created = await callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: repo.id, workflow: "CI", job: "" }));
    expect(created).toMatchObject({ version: 1, workflow: "CI", job: null, repositoryId: repo.id });
    const updated = await callerFor(maintainer).triggers.update({
      ...ruleInput({ stackId, repositoryId: repo.id, name: created.name, workflow: "CI", branchGlob: "main", pathFilters: ["src/**"] }),
      ruleId: created.id,
      expectedVersion: 1,
    });
    expect(updated).toMatchObject({ version: 2, branchGlob: "main", pathFilters: ["src/**"] });
    const list = await callerFor(viewer).triggers.list();
    const row = list.rules.find((r) => r.id === created.id);
    expect(row).toMatchObject({ canEdit: false, stack: { id: stackId } });
    await callerFor(maintainer).triggers.delete({ ruleId: created.id, expectedVersion: 2 });
    expect(await db.triggerRule.count({ where: { id: created.id } })).toBe(0);
    const audit = await db.auditEntry.findMany({ where: { objectId: created.id }, orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["trigger_rule.create", "trigger_rule.update", "trigger_rule.delete"]);
    expect(audit[1]?.detail).toMatchObject({
      fromVersion: 1,
      toVersion: 2,
      changes: [
        { path: "branchGlob", before: null, after: "main" },
        { path: "pathFilters", before: "(none)", after: "src/**" },
      ],
    });
  });

  it("answers keys the kind cannot carry and task kinds it cannot start with field errors", async () => {
    const res = await callHttp(maintainer, "triggers.create", ruleInput({ stackId, repositoryId: repo.id, kind: "pr_comment", workflow: "CI", taskKind: "release_review" }));
    expect(res.status).toBe(400);
    expect(res.error?.data.fieldErrors?.workflow?.[0]).toBe("pr_comment rules cannot match on workflow: clear it");
    expect(res.error?.data.fieldErrors?.taskKind?.[0]).toMatch(/start diagnose or repair or triage/);
    const sig = await callHttp(maintainer, "triggers.create", ruleInput({ stackId, repositoryId: repo.id, failureSignature: "not-hex" }));
    expect(sig.error?.data.fieldErrors?.failureSignature?.[0]).toMatch(/16 hex/);
  });

  it("lets maintainers change their repositories' rules and admins the global ones", async () => {
    expect((await refusal(callerFor(null).triggers.create(ruleInput({ stackId, repositoryId: repo.id })))).code).toBe("UNAUTHORIZED");
    const asViewer = await refusal(callerFor(viewer).triggers.create(ruleInput({ stackId, repositoryId: repo.id })));
    expect(asViewer.code).toBe("FORBIDDEN");
    expect(asViewer.message).toMatch(/maintainer role.*you are viewer/);
    expect((await refusal(callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: otherRepo.id })))).code).toBe("FORBIDDEN");
    const global = await refusal(callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: null })));
    expect(global.message).toMatch(/Only an Airlock admin .* every repository/);
    const byAdmin = await callerFor(admin).triggers.create(ruleInput({ stackId, repositoryId: null, enabled: false }));
    // Moving the admin's global rule into the maintainer's repository is still the admin's call.
    const move = await refusal(
      callerFor(maintainer).triggers.update({ ...ruleInput({ stackId, repositoryId: repo.id, name: byAdmin.name }), ruleId: byAdmin.id, expectedVersion: 1 }),
    );
    expect(move.code).toBe("FORBIDDEN");
    expect((await db.triggerRule.findUniqueOrThrow({ where: { id: byAdmin.id } })).repositoryId).toBeNull();
  });

  it("refuses an edit over a newer one with their change, and keeps it", async () => {
    const rule = await callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: repo.id }));
    const base = { stackId, repositoryId: repo.id, name: rule.name };
    await callerFor(colleague).triggers.update({ ...ruleInput({ ...base, branchGlob: "release/*" }), ruleId: rule.id, expectedVersion: 1 });
    const err = await refusal(callerFor(maintainer).triggers.update({ ...ruleInput({ ...base, action: "auto_run" }), ruleId: rule.id, expectedVersion: 1 }));
    expect(err.code).toBe("CONFLICT");
    const details = (err.cause as AppError).details as { savedBy: string; theirChange: { changes: unknown[] }; current: Record<string, unknown> };
    expect(details.savedBy).toBe(colleague.email);
    expect(details.theirChange.changes).toEqual([{ path: "branchGlob", kind: "changed", before: null, after: "release/*" }]);
    expect(details.current).toMatchObject({ branchGlob: "release/*", action: "suggest" });
    expect(await db.triggerRule.findUniqueOrThrow({ where: { id: rule.id } })).toMatchObject({ version: 2, branchGlob: "release/*", action: "suggest" });
  });
});

describe("dry run", () => {
  it("predicts exactly the runs and duplicates the live trigger path then makes", async () => {
    const rule = await callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: repo.id, workflow: "CI", job: "test" }));
    const t0 = Date.parse("2026-11-29T12:00:00Z");
    const at = (min: number) => new Date(t0 + min * 60_000);
    const runId = () => `run-${uid()}`;
    // Already evaluated: a run holds its key.
    const earlyRun = runId();
    const early = await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`early-${uid()}`), runId: earlyRun }), `dry-early-${uid()}`, at(0));
    const existing = (await evaluate(db, early)).created;
    const existingRun = await db.agentDispatchRun.findFirstOrThrow({ where: { id: { in: existing.map((c) => c.runId) }, triggerRuleId: rule.id } });

    const firstRun = runId();
    const headSha = sha(`dry-${uid()}`);
    const pending = [
      await recordFailure(db, failedCheck({ repo: repo.fullName, headSha, runId: firstRun }), `dry-match-${uid()}`, at(1)),
      await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`lint-${uid()}`), runId: runId(), jobName: "lint" }), `dry-lint-${uid()}`, at(2)),
      await recordFailure(db, failedCheck({ repo: repo.fullName, headSha: sha(`deploy-${uid()}`), runId: runId(), workflowName: "Deploy" }), `dry-deploy-${uid()}`, at(3)),
      // The same failure delivered again: the live path drops it.
      await recordFailure(db, failedCheck({ repo: repo.fullName, headSha, runId: firstRun }), `dry-redelivery-${uid()}`, at(4)),
    ];
    // Another repository's failure is out of this rule's scope.
    await recordFailure(db, failedCheck({ repo: otherRepo.fullName, headSha: sha("other"), runId: runId() }), `dry-other-${uid()}`, at(5));

    const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...values } = rule;
    const dry = await callerFor(viewer).triggers.dryRun({ ruleId: rule.id, rule: values });
    const byDelivery = new Map(dry.events.flatMap((e) => (e.ref.kind === "delivery" ? [[e.ref.deliveryId, e]] : [])));
    expect(dry.events.every((e) => e.repository === repo.fullName)).toBe(true);
    expect(byDelivery.get(early)).toMatchObject({ outcome: "duplicate", duplicateOf: { runId: existingRun.id, number: existingRun.number } });
    expect(pending.map((d) => byDelivery.get(d)?.outcome)).toEqual(["create", "skipped", "skipped", "duplicate"]);
    expect(byDelivery.get(pending[1]!)?.reason).toBe('job: "lint" is not "test"');
    expect(byDelivery.get(pending[2]!)?.reason).toBe('workflow: "Deploy" is not "CI"');

    // Now the live path evaluates the same deliveries, oldest first.
    for (const d of pending) await evaluate(db, d);
    for (const d of pending) {
      const predicted = byDelivery.get(d)!;
      const drops = await db.triggerDrop.findMany({ where: { deliveryId: d, ruleId: rule.id } });
      const runs = await db.agentDispatchRun.findMany({ where: { triggerRuleId: rule.id, dedupeKey: predicted.candidate?.dedupeKey ?? "-" } });
      if (predicted.outcome === "create") {
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({ status: predicted.candidate?.action === "auto_run" ? "queued" : "suggested", taskKind: predicted.candidate?.taskKind });
        expect(drops).toHaveLength(0);
      } else if (predicted.outcome === "duplicate") {
        expect(drops).toHaveLength(1);
        expect(drops[0]?.dedupeKey).toBe(predicted.candidate?.dedupeKey);
      } else {
        expect(drops).toHaveLength(0);
        expect(await db.triggerDrop.count({ where: { deliveryId: d } })).toBe(0);
      }
    }
    expect(await db.agentDispatchRun.count({ where: { triggerRuleId: rule.id } })).toBe(2);

    // An unsaved edit is tried before it is saved: matching lint instead now creates that run.
    const edited = await callerFor(viewer).triggers.dryRun({ ruleId: rule.id, rule: { ...values, job: "lint" } });
    expect(edited.events.find((e) => e.ref.kind === "delivery" && e.ref.deliveryId === pending[1])?.outcome).toBe("create");
    expect((await db.triggerRule.findUniqueOrThrow({ where: { id: rule.id } })).job).toBe("test");
  });

  it("shows where the repository's own rule takes precedence, and that a rule set to fire alongside fires", async () => {
    const own = await createRepository({ members: [[maintainer, "maintainer"]] });
    const mine = await callerFor(maintainer).triggers.create(ruleInput({ stackId, repositoryId: own.id, name: "own CI" }));
    const delivery = await recordFailure(db, failedCheck({ repo: own.fullName, headSha: sha(`prec-${uid()}`), runId: `run-${uid()}` }), `dry-prec-${uid()}`, new Date());
    // A rule for every repository (an admin's), tried before it is saved.
    const global = ruleInput({ stackId, repositoryId: null, name: "every failure" });
    const dry = await callerFor(admin).triggers.dryRun({ ruleId: null, rule: global });
    const event = dry.events.find((e) => e.ref.kind === "delivery" && e.ref.deliveryId === delivery);
    expect(event).toMatchObject({ outcome: "superseded", reason: `superseded by rule "own CI": a repository's rule takes precedence over a rule for every repository` });
    expect(event?.precedence).toBe(`rule "own CI" wins over "every failure" (a repository's rule takes precedence over a rule for every repository)`);
    expect(dry.summary.superseded).toBeGreaterThanOrEqual(1);
    const alongside = await callerFor(admin).triggers.dryRun({ ruleId: null, rule: { ...global, alsoFire: true } });
    const fires = alongside.events.find((e) => e.ref.kind === "delivery" && e.ref.deliveryId === delivery);
    expect(fires).toMatchObject({ outcome: "create", precedence: `rule "own CI" is the most specific; "every failure" also fires: set to fire alongside` });
    // And the live path does what the dry run said: one run, by the repository's rule.
    await evaluate(db, delivery);
    expect((await db.agentDispatchRun.findMany({ where: { repositoryId: own.id } })).map((r) => r.triggerRuleId)).toEqual([mine.id]);
  });

  it("keeps a stranger out of another repository's events", async () => {
    const stranger = await createUser();
    const err = await refusal(callerFor(stranger).triggers.dryRun({ ruleId: null, rule: ruleInput({ stackId, repositoryId: repo.id }) }));
    expect(err.code).toBe("FORBIDDEN");
  });
});
