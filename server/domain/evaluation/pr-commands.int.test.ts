// "@agent ..." comments end to end: who may dispatch (author association or an Airlock role
// through GitHub sign-in), what the run gets, refusals recorded, and "@agent cancel".
import { beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-pr-command-tests";

const { getDb } = await import("@/server/db");
const { createRepository, createUser } = await import("@/server/testing/factories");
const { createPullRequest, createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { prComment } = await import("@/server/domain/ingest/fixtures/deliveries");
const { LOGS, localFailedCheck } = await import("@/server/domain/ingest/fixtures/local-events");
const { deliver, eventTypes } = await import("./fixtures/harness");
const { ingestCiEvent } = await import("@/server/domain/ingest/delivery/ingest-ci-event");
const { evaluateDelivery } = await import("./evaluate");

const db = getDb();
let repo: Awaited<ReturnType<typeof createRepository>>;
const headSha = sha("pr-commands");

beforeAll(async () => {
  repo = await createRepository();
  const stack = await createStack(db);
  await createRule(db, { kind: "pr_comment", stackId: stack.id, taskKind: "repair" });
  await createRule(db, { kind: "pr_comment", stackId: stack.id, taskKind: "diagnose", repositoryId: repo.id });
  await createPullRequest(db, { repositoryId: repo.id, number: 7, headSha, headRef: "feature/dates", isFork: false, changedFiles: ["src/lib/date.ts"], title: "Relative dates" });
  // The PR's red check, from local CI (with its log).
  const { deliveryId } = await ingestCiEvent({
    db,
    event: localFailedCheck({ repo: repo.fullName, headSha, headBranch: "feature/dates", runId: "ci-pr7", pr: { number: 7, headRef: "feature/dates" } }),
    log: LOGS.vitestA,
  });
  await evaluateDelivery({ db, deliveryId });
});

const comment = (body: string, login: string, association: string, userId?: number) =>
  deliver(db, prComment({ repo: repo.fullName, number: 7, body, login, association, userId }));

describe("PR comment commands", () => {
  it("queues a repair run for a member's `@agent fix failing check`, with the failing job's context", async () => {
    const result = await comment("Thanks!\n@agent fix failing check please", "octocat", "MEMBER");
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId }, include: { pullRequest: true, job: true } });
    expect(run).toMatchObject({ status: "queued", taskKind: "repair", source: "pr_comment", actor: "octocat", headSha, isFork: false });
    expect(run.title).toBe("Repair on PR #7 (requested by octocat)");
    expect(run.pullRequest?.number).toBe(7);
    expect(run.job?.name).toBe("test");
    const bundle = run.contextBundle as {
      actor: { permission: { allowed: boolean; reason: string } };
      source: { command: string };
      pullRequest: { discussion: { body: string }[]; changedFiles: string[] };
      logs: { excerpt: string }[];
      failure: { signature: string };
    };
    expect(bundle.actor.permission).toEqual({ allowed: true, reason: "MEMBER: a member of the organization" });
    expect(bundle.source.command).toBe("fix_failing_check please");
    expect(bundle.pullRequest.discussion[0]?.body).toContain("@agent fix failing check");
    expect(bundle.pullRequest.changedFiles).toEqual(["src/lib/date.ts"]);
    expect(bundle.logs[0]?.excerpt).toContain("formats yesterday");
    expect(bundle.failure.signature).toBe(run.job?.failureSignature);
    const jobs = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier = 'run.dispatch' AND j.payload->>'runId' = ${run.id}`;
    expect(jobs[0]?.n).toBe(1);
  });

  it("refuses a first-time contributor, records why, and notes it on the PR's live run", async () => {
    const live = await db.agentDispatchRun.findFirstOrThrow({ where: { repositoryId: repo.id, status: "queued" } });
    const result = await comment("@agent diagnose", "newbie", "FIRST_TIME_CONTRIBUTOR");
    expect(result.created).toHaveLength(0);
    expect(result.refused[0]).toContain("newbie may not dispatch: FIRST_TIME_CONTRIBUTOR");
    const drop = await db.triggerDrop.findFirstOrThrow({ where: { deliveryId: result.deliveryId } });
    expect(drop).toMatchObject({ runId: null, reason: expect.stringContaining("FIRST_TIME_CONTRIBUTOR") });
    expect(await eventTypes(db, live.id)).toContain("dispatch_skipped");
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repo.id, actor: "newbie" } })).toBe(0);
  });

  it("lets an Airlock maintainer linked through GitHub sign-in dispatch without a GitHub association", async () => {
    const user = await createUser();
    await db.account.create({ data: { id: `gh-${user.id}`, accountId: "4242", providerId: "github", userId: user.id } });
    await db.membership.create({ data: { userId: user.id, repositoryId: repo.id, role: "maintainer" } });
    const result = await comment("@agent diagnose", "maya", "CONTRIBUTOR", 4242);
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run).toMatchObject({ actorUserId: user.id, taskKind: "diagnose", status: "queued" });
    expect((run.contextBundle as { actor: { airlockRole: string } }).actor.airlockRole).toBe("maintainer");
  });

  it("ignores a comment that does not address the repository's bot handle", async () => {
    await db.repository.update({ where: { id: repo.id }, data: { botHandle: "@airlock" } });
    try {
      const ignored = await comment("@agent diagnose", "octocat", "MEMBER");
      expect(ignored).toMatchObject({ outcome: "ignored", detail: "comment does not address @airlock" });
      const handled = await comment("@airlock diagnose", "octocat", "OWNER");
      expect(handled.outcome).toBe("duplicate");
    } finally {
      await db.repository.update({ where: { id: repo.id }, data: { botHandle: "@agent" } });
    }
  });

  it("refuses `@agent cancel` from a first-timer and cancels the PR's live runs for a member", async () => {
    const live = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id, status: { in: ["queued", "suggested"] } } });
    expect(live.length).toBeGreaterThanOrEqual(2);
    const refused = await comment("@agent cancel", "newbie", "FIRST_TIMER");
    expect(refused.cancelled).toEqual([]);
    expect(refused.refused[0]).toContain("cancel refused");
    expect(await db.agentDispatchRun.count({ where: { id: { in: live.map((r) => r.id) }, status: "cancelled" } })).toBe(0);

    const cancel = await comment("@agent cancel", "octocat", "COLLABORATOR");
    expect(cancel.cancelled.sort()).toEqual(live.map((r) => r.number).sort());
    expect(await db.agentDispatchRun.count({ where: { id: { in: live.map((r) => r.id) }, status: "cancelled" } })).toBe(live.length);
    const audit = await db.auditEntry.findMany({ where: { action: "run.cancel", objectId: { in: live.map((r) => r.id) } } });
    expect(audit.map((a) => a.actor)).toEqual(live.map(() => "octocat"));
  });
});
