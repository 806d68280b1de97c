// Attribution through the real paths: observations recorded before a pass, a red check delivered
// by webhook decided by the attribution policy and stored with its facts and proof, and the
// verdict handed to the next fix run's prompt and bundle.
import { describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-attribution-tests";

const { getDb, transaction } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createPullRequest, createRule, sha, createStack: createTemplateStack } = await import("../ingest/fixtures/world");
const { failedCheckRun, reviewSubmitted } = await import("../ingest/fixtures/deliveries");
const { deliver } = await import("@/server/domain/evaluation/fixtures/harness");
const { createExecRun, createStack, scriptedSpec } = await import("@/server/queue/testing/fixtures");
const { recordCiObservation, markPassLeftEdits } = await import("./observe");
const { launchFixRun } = await import("./launch");
const { listRunDecisions } = await import("../policy/decisions");

const db = getDb();

async function world() {
  const repo = await createRepository();
  const stack = await createStack(scriptedSpec());
  const pr = await createPullRequest(db, { repositoryId: repo.id, number: 12, headSha: sha("h1"), headRef: "feature" });
  const run = await createExecRun({ repositoryId: repo.id, stack, sha: sha("h1") });
  await db.agentDispatchRun.update({ where: { id: run.id }, data: { pullRequestId: pr.id, headBranch: "feature" } });
  await db.pipeline.create({
    data: { repositoryId: repo.id, pullRequestId: pr.id, workflowName: "ci", checkName: "ci / test", externalId: "p1", status: "completed", conclusion: "success", headSha: sha("h1"), headBranch: "feature" },
  });
  await db.pipeline.create({
    data: { repositoryId: repo.id, pullRequestId: pr.id, workflowName: "lint", checkName: "lint", externalId: "p2", status: "in_progress", headSha: sha("h1"), headBranch: "feature" },
  });
  return { repo, stack, pr, run };
}

describe("red-check attribution through the engine", () => {
  it("records what CI showed before the pass and whether it left edits", async () => {
    const { repo, run } = await world();
    const attempt = await db.dispatchAttempt.create({ data: { runId: run.id, number: 1, status: "starting", fencingToken: 1 } });
    const loaded = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { pullRequest: { select: { headRef: true } } } });
    await transaction(db, "t", (tx) => recordCiObservation(tx, { run: loaded, attemptId: attempt.id, now: new Date() }));
    // Idempotent per attempt (a retried claim records nothing twice).
    await transaction(db, "t", (tx) => recordCiObservation(tx, { run: loaded, attemptId: attempt.id, now: new Date() }));
    const [obs, ...more] = await db.ciObservation.findMany({ where: { repositoryId: repo.id } });
    expect(more).toHaveLength(0);
    expect(obs).toMatchObject({ branch: "feature", headSha: sha("h1"), leftEdits: false, runId: run.id, checks: [{ name: "ci / test", conclusion: "success" }, { name: "lint", conclusion: null }] });
    await transaction(db, "t", (tx) => markPassLeftEdits(tx, attempt.id));
    expect((await db.ciObservation.findUniqueOrThrow({ where: { id: obs!.id } })).leftEdits).toBe(true);
  });

  it("a red check after our edits is ours, stored with its facts and proof on the run, and reaches the next fix run", async () => {
    const { repo, pr, run } = await world();
    await db.ciObservation.create({
      data: { repositoryId: repo.id, branch: "feature", pullRequestId: pr.id, runId: run.id, headSha: sha("h1"), checks: [{ name: "ci / test", conclusion: "success" }], leftEdits: true },
    });
    // A person pushed on top of our push (h3): still in range.
    const red = await deliver(db, failedCheckRun({ repo: repo.fullName, suiteId: 1, checkRunId: 77, name: "ci / test", headSha: sha("h3"), headBranch: "feature", pr: { number: 12, headRef: "feature" } }));
    expect(red.detail).toContain("attribution of ci / test: ours");

    const decisions = await listRunDecisions({ db, runId: run.id });
    const attribution = decisions.find((d) => d.decision.policy.kind === "attribution");
    expect(attribution?.decision).toMatchObject({ value: "ours", rule: "our_edits_after_green" });
    expect(attribution?.decision.facts.observed_history?.value).toBe(`${sha("h1").slice(0, 7)} ci / test=success +edits -> ci / test red at ${sha("h3").slice(0, 7)}`);
    expect(attribution?.decision.proof).toBeTruthy();

    // An engaged PR (our push landed) gets a changes-requested review: the fix run's prompt and
    // bundle carry the attribution with its guidance.
    await db.writeBack.create({
      data: { runId: run.id, kind: "update_pr_branch", actor: "t", stackDigest: run.stackDigest, contextDigest: run.contextDigest, promptHash: run.promptHash, target: {}, idempotencyKey: `wb_${run.id}`, outcome: "succeeded" },
    });
    await db.agentDispatchRun.update({ where: { id: run.id }, data: { status: "succeeded" } });
    const review = reviewSubmitted({ repo: repo.fullName, number: 12, state: "changes_requested", login: "maintainer", headSha: sha("h3") });
    Object.assign((review.payload as { review: Record<string, unknown> }).review, { id: 4242, body: "The test is red, fix it." });
    await deliver(db, review);
    const intent = await db.fixSpawnIntent.findFirstOrThrow({ where: { repositoryId: repo.id } });
    const launched = await launchFixRun({ db, intentId: intent.id });
    if (launched.kind !== "launched") throw new Error(JSON.stringify(launched));
    const fix = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: launched.runId } });
    expect(fix.prompt).toContain("## Red checks on this branch (attribution)\n- ci / test: ours. Our edits are in range of this failure: treat it as your regression and fix it first.");
    expect((fix.contextBundle as { attribution?: unknown }).attribution).toEqual([expect.objectContaining({ check: "ci / test", attribution: "ours", rule: "our_edits_after_green" })]);
    expect(fix.headSha).toBe(pr.headSha);
  });

  it("a run a trigger rule creates for the red check carries the attribution in its bundle and prompt", async () => {
    const { repo, pr, run } = await world();
    // The rule's stack template does not ask for {{attribution}}: the prompt gets it anyway.
    const ruleStack = await createTemplateStack(db);
    const rule = await createRule(db, { kind: "failed_check", stackId: ruleStack.id, repositoryId: repo.id });
    // Our pass started from green h1 and left edits; then the check goes red at h2.
    await db.ciObservation.create({
      data: { repositoryId: repo.id, branch: "feature", pullRequestId: pr.id, runId: run.id, headSha: sha("h1"), checks: [{ name: "ci / test", conclusion: "success" }], leftEdits: true },
    });
    const red = failedCheckRun({ repo: repo.fullName, suiteId: 3, checkRunId: 79, name: "ci / test", headSha: sha("h2"), headBranch: "feature", pr: { number: 12, headRef: "feature" } });
    const out = await deliver(db, red);
    expect(out.detail).toContain("attribution of ci / test: ours");
    const [triggered, ...others] = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id, triggerRuleId: rule.id } });
    expect(others).toHaveLength(0);
    const guidance = "Our edits are in range of this failure: treat it as your regression and fix it first.";
    const history = `${sha("h1").slice(0, 7)} ci / test=success +edits -> ci / test red at ${sha("h2").slice(0, 7)}`;
    expect((triggered!.contextBundle as { attribution?: unknown }).attribution).toEqual([
      { check: "ci / test", attribution: "ours", rule: "our_edits_after_green", guidance, history },
    ]);
    expect(triggered!.prompt).toContain(`## Red checks on this branch (attribution)\n- ci / test: ours. ${guidance}`);

    // The decision the bundle carries is the one stored, once, with its proof, on the new run.
    const decisions = (await listRunDecisions({ db, runId: triggered!.id })).filter((d) => d.decision.policy.kind === "attribution");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]!.decision).toMatchObject({ value: "ours", rule: "our_edits_after_green" });
    expect(decisions[0]!.decision.facts.observed_history?.value).toBe(history);
    expect(await db.policyDecision.count({ where: { subject: { startsWith: `red_check|ci / test|${repo.id}:` } } })).toBe(1);

    // Redeliveries of the same red check (new delivery ids, as GitHub's "Redeliver" sends) make
    // no run and add no decision: the stored one stands.
    for (const _ of [1, 2, 3]) expect((await deliver(db, red)).outcome).toBe("duplicate");
    expect(await db.policyDecision.count({ where: { subject: { startsWith: `red_check|ci / test|${repo.id}:` } } })).toBe(1);
  });

  it("a red check that starts no run is attributed once, however often it is delivered", async () => {
    const { repo, pr, run } = await world();
    await db.ciObservation.create({
      data: { repositoryId: repo.id, branch: "feature", pullRequestId: pr.id, runId: run.id, headSha: sha("h1"), checks: [{ name: "ci / test", conclusion: "success" }], leftEdits: true },
    });
    const red = failedCheckRun({ repo: repo.fullName, suiteId: 4, checkRunId: 80, name: "ci / test", headSha: sha("h4"), headBranch: "feature", pr: { number: 12, headRef: "feature" } });
    for (const _ of [1, 2, 3]) expect((await deliver(db, red)).detail).toContain("attribution of ci / test: ours");
    const decisions = await db.policyDecision.findMany({ where: { subject: { startsWith: `red_check|ci / test|${repo.id}:` } } });
    expect(decisions.map((d) => d.runId)).toEqual([run.id]);
  });

  it("no observations on the branch: no agent activity, nothing attributed", async () => {
    const { repo } = await world();
    const red = await deliver(db, failedCheckRun({ repo: repo.fullName, suiteId: 2, checkRunId: 78, name: "ci / test", headSha: sha("h9"), headBranch: "feature", pr: { number: 12, headRef: "feature" } }));
    expect(red.detail).not.toContain("attribution");
    expect(await db.policyDecision.count({ where: { subject: { startsWith: `red_check|ci / test|${repo.id}:` } } })).toBe(0);
  });
});
