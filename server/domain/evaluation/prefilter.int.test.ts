// The prefilter against the full evaluation, on a real database: the same delivery recorded
// twice (two delivery ids), one evaluated with the prefilter and one without; what each stored
// must be the same, and the dry run (which always loads facts) must plan what the prefilter did.
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-prefilter-tests";

const { getDb } = await import("@/server/db");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedWorkflowJob, prComment, releasePublished } = await import("@/server/domain/ingest/fixtures/deliveries");
const { nextDeliveryId, post } = await import("./fixtures/harness");
const { evaluateDelivery, readDelivery } = await import("./evaluate");
const { loadDelivery, screenDelivery } = await import("./load");
const { liveRulesFor, planEvaluation } = await import("./plan");
const { prefilterPlan } = await import("./prefilter");
const { dryRunTriggerRule } = await import("./dry-run");
const { ruleInput } = await import("@/server/testing/config-factories");
type Delivery = import("@/server/domain/ingest/fixtures/deliveries").Delivery;

const db = getDb();
let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

/** Rows evaluation may write, counted across the tables it writes to. */
async function tableCounts() {
  const [runs, drops, events, pullRequests, pipelines, jobs, triage, policy, notifications, pushed] = await Promise.all([
    db.agentDispatchRun.count(),
    db.triggerDrop.count(),
    db.runEvent.count(),
    db.pullRequest.count(),
    db.pipeline.count(),
    db.job.count(),
    db.triageDecision.count(),
    db.policyDecision.count(),
    db.notification.count(),
    db.pushedCommit.count(),
  ]);
  return { runs, drops, events, pullRequests, pipelines, jobs, triage, policy, notifications, pushed };
}

type Counts = Awaited<ReturnType<typeof tableCounts>>;
const delta = (a: Counts, b: Counts) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k as keyof Counts] - a[k as keyof Counts]]));

/** Evaluate one copy of `delivery` each way; returns what each stored and whether the prefilter decided. */
async function bothWays(delivery: Delivery) {
  const full = await post(delivery, nextDeliveryId("full"));
  const fast = await post(delivery, nextDeliveryId("fast"));
  expect([full.status, fast.status]).toEqual([202, 202]);
  const stored = async (deliveryId: string, prefilter: boolean) => {
    const before = await tableCounts();
    const result = await evaluateDelivery({ db, deliveryId, prefilter });
    const wrote = delta(before, await tableCounts());
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId } });
    const drops = await db.triggerDrop.findMany({ where: { deliveryId }, select: { reason: true, ruleId: true, dedupeKey: true } });
    return { result, wrote, outcome: row.outcome, detail: row.detail, processed: row.processedAt !== null, drops };
  };
  const a = await stored(full.deliveryId, false);
  const b = await stored(fast.deliveryId, true);
  return { full: a, fast: b };
}

function expectSameStored(both: Awaited<ReturnType<typeof bothWays>>) {
  const { full, fast } = both;
  expect(fast.processed).toBe(true);
  expect({ outcome: fast.outcome, detail: fast.detail, wrote: fast.wrote, drops: fast.drops }).toEqual({ outcome: full.outcome, detail: full.detail, wrote: full.wrote, drops: full.drops });
  expect({ outcome: fast.result.outcome, detail: fast.result.detail, created: fast.result.created, refused: fast.result.refused }).toEqual({
    outcome: full.result.outcome,
    detail: full.result.detail,
    created: full.result.created,
    refused: full.result.refused,
  });
}

describe("the prefilter stores what the full evaluation stores", () => {
  it("records a release no release rule is configured for without reading facts", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id });
    const both = await bothWays(releasePublished({ repo: repo.fullName, tag: "v2.0.0", targetCommitish: "main" }));
    expect([both.full.result.prefiltered, both.fast.result.prefiltered]).toEqual([false, true]);
    expectSameStored(both);
    expect(both.fast.detail).toBe("no run: no release rules are configured");
  });

  it("records a comment refused for permission the same way when no comment rule applies (a rule of another repository does not)", async () => {
    const repo = await createRepository();
    const other = await createRepository();
    await createRule(db, { kind: "pr_comment", stackId, repositoryId: other.id });
    await createPullRequest(db, { repositoryId: repo.id, number: 4, headSha: sha("prefilter-comment"), headRef: "feature/x", isFork: false });
    const stranger = await bothWays(prComment({ repo: repo.fullName, number: 4, body: "@agent diagnose", login: "drive-by", association: "NONE" }));
    expect([stranger.full.result.prefiltered, stranger.fast.result.prefiltered]).toEqual([false, true]);
    expectSameStored(stranger);
    expect(stranger.fast.detail).toMatch(/^no run: drive-by may not dispatch/);
    const member = await bothWays(prComment({ repo: repo.fullName, number: 4, body: "@agent diagnose", login: "octocat", association: "MEMBER" }));
    expect([member.full.result.prefiltered, member.fast.result.prefiltered]).toEqual([false, true]);
    expectSameStored(member);
    expect(member.fast.detail).toBe("no run: no pr_comment rules are configured");
  });

  // Screening decides these in either mode (it always did, before any facts): the same rows, one statement fewer.
  it("records a failed check of an unregistered repository and of a disabled one the same way", async () => {
    await createRule(db, { kind: "failed_check", stackId });
    const job = (fullName: string) =>
      failedWorkflowJob({ repo: fullName, runId: 901, jobId: 9011, jobName: "test", step: "Run npm test", headSha: sha(`prefilter-${fullName}`), headBranch: "main" });
    const unregistered = await bothWays(job("nobody/registered-this"));
    expect(unregistered.fast.result.prefiltered).toBe(true);
    expectSameStored(unregistered);
    expect(unregistered.fast.detail).toContain("is not registered in Airlock");
    const disabled = await createRepository();
    await db.repository.update({ where: { id: disabled.id }, data: { disabledAt: new Date(), disabledReason: "uninstalled" } });
    const off = await bothWays(job(disabled.fullName));
    expect(off.fast.result.prefiltered).toBe(true);
    expectSameStored(off);
  });
});

describe("what the prefilter leaves to the full evaluation", () => {
  it("evaluates in full a release a rule of its kind applies to, and makes its run", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "release", stackId, repositoryId: repo.id, action: "suggest" });
    const posted = await post(releasePublished({ repo: repo.fullName, tag: "v3.0.0", targetCommitish: sha("prefilter-v3") }));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId });
    expect(result.prefiltered).toBe(false);
    expect(result.created).toHaveLength(1);
  });

  it("evaluates in full a failed check no rule matches (its CI records and triage are written) and `@agent cancel`", async () => {
    const repo = await createRepository();
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repo.id, job: "deploy" });
    const both = await bothWays(failedWorkflowJob({ repo: repo.fullName, runId: 902, jobId: 9021, jobName: "test", step: "Run npm test", headSha: sha("prefilter-nomatch"), headBranch: "main" }));
    expect(both.fast.result.prefiltered).toBe(false);
    // The copy evaluated first wrote the records; the second found them.
    expect(both.full.wrote).toMatchObject({ pipelines: 1, jobs: 1, triage: 1 });
    await createPullRequest(db, { repositoryId: repo.id, number: 5, headSha: sha("prefilter-cancel"), headRef: "feature/y", isFork: false });
    const cancel = await post(prComment({ repo: repo.fullName, number: 5, body: "@agent cancel", login: "octocat", association: "MEMBER" }));
    expect((await evaluateDelivery({ db, deliveryId: cancel.deliveryId })).prefiltered).toBe(false);
  });
});

describe("the dry run agrees with the live path", () => {
  it("plans with facts what the prefilter planned without them, and shows the run a new rule of the kind would make", async () => {
    const admin = await createUser({ isAdmin: true });
    const repo = await createRepository();
    const posted = await post(releasePublished({ repo: repo.fullName, tag: "v4.0.0", targetCommitish: sha("prefilter-v4") }));
    const row = (await readDelivery(db, posted.deliveryId))!;
    const rules = await liveRulesFor(db, repo.id);
    const screened = await screenDelivery(db, row);
    const loaded = await loadDelivery(db, row);
    if (!screened.ok || !loaded.ok) throw new Error("the release should load");
    const early = prefilterPlan(screened, rules);
    expect(early).not.toBeNull();
    expect(early).toEqual(planEvaluation(loaded, rules));

    // Before the rule is saved the dry run says it would create a run; once saved, live makes it.
    const input = ruleInput({ stackId, repositoryId: repo.id, kind: "release", taskKind: "release_review" });
    const dry = await dryRunTriggerRule({ db, actor: admin, input: { ruleId: null, rule: input } });
    expect(dry.events.find((e) => e.ref.kind === "delivery" && e.ref.deliveryId === posted.deliveryId)?.outcome).toBe("create");
    await createRule(db, { kind: "release", stackId, repositoryId: repo.id, action: "suggest" });
    const live = await evaluateDelivery({ db, deliveryId: posted.deliveryId });
    expect(live.prefiltered).toBe(false);
    expect(live.created).toHaveLength(1);
  });
});
