import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { demoStory } from "@/server/domain/demo/story";
import { fixForwardOnApprovalRejection } from "@/server/domain/fixloop/triggers";
import { bootstrapDemo, DEMO_BUDGET_STACK, DEMO_FLAKY_BRANCH, DEMO_PRIVILEGED_BRANCH, DEMO_PRIVILEGED_STACK, DEMO_REPOSITORY } from "@/server/forges/local/demo";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";
import { startWorker } from "@/server/queue/worker";
import { callerFor } from "@/server/testing/factories";
import { seed } from "../seed";
import { demoUsers } from "./users";

// The demo as `npm start` makes it, on a fresh database: the seed, a real worker, and the demo
// bootstrap on the real local forge (git, the local CI's vitest in the sandbox, the scripted
// agent). Every scene the story panel tells a newcomer about reaches the state it claims, and
// the actions it offers (approve the push, approve the privileged launch) work offline.

const db = getDb();
const toolchain = resolve("node_modules");
let dataDir: string;
let worker: Awaited<ReturnType<typeof startWorker>>;
let startedAt: Date;

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const maintainer = () => {
  const u = demoUsers.maintainer;
  return { id: u.id, email: u.email, name: u.name, isAdmin: u.isAdmin };
};

async function approve(approvalId: string) {
  const a = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
  return callerFor(maintainer()).approvals.approve({ approvalId, artifactDigest: a.artifactDigest, headSha: a.targetHeadSha });
}

const runStatus = async (id: string) => (await db.agentDispatchRun.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "airlock-demo-"));
  await seed(db, { dataDir });
  startedAt = new Date();
  worker = await startWorker({ settings: { dataDir, scriptedSpeed: 50, toolchainNodeModules: toolchain }, demo: false });
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the demo bootstrap on a fresh database", () => {
  it("leaves no seeded run for the worker to pick up and fail", async () => {
    expect(await db.agentDispatchRun.count({ where: { status: { in: ["queued", "running"] } } })).toBe(0);
    expect(await db.dispatchAttempt.count({ where: { status: { in: ["queued", "running"] } } })).toBe(0);
  });

  it("starts every scene, and each reaches the state the story panel claims", { timeout: 420_000 }, async () => {
    const result = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 90_000, toolchainNodeModules: toolchain, runWaitMs: 90_000 });
    expect(result.summary).toMatch(/^dispatched the suggested run/);
    expect(result.summary).toMatch(/the cost-cap scene/);
    expect(result.summary).toMatch(/the privileged-capability scene/);
    expect(result.summary).toMatch(/the flaky-test scene/);
    const demoRunId = result.runId!;

    // The loop: the demo run leaves a patch whose push waits for a person.
    await until("the demo run to await approval", async () => (await runStatus(demoRunId)) === "awaiting_approval");
    const push = await db.approvalRequest.findFirstOrThrow({ where: { runId: demoRunId, action: { in: ["push_commits", "update_pr_branch"] } } });
    expect(push.status).toBe("pending");

    // The cost cap: the budget fork is stopped by the meter.
    const budget = await db.agentStack.findUniqueOrThrow({ where: { name: DEMO_BUDGET_STACK } });
    const capped = await until("the cost-cap fork to end", async () => {
      const r = await db.agentDispatchRun.findFirst({ where: { parentRunId: demoRunId, stackId: budget.id }, include: { attempts: true } });
      return r?.status === "failed" ? r : null;
    });
    expect(capped.attempts.map((a) => a.exitReason)).toEqual([expect.stringMatching(/^Cost cap reached/)]);

    // The privileged capability: the fork's attempt is held for a person, launching nothing.
    const privilegedStack = await db.agentStack.findUniqueOrThrow({ where: { name: DEMO_PRIVILEGED_STACK } });
    const privileged = await until("the privileged fork to wait for a person", async () => {
      const r = await db.agentDispatchRun.findFirst({ where: { parentRunId: demoRunId, stackId: privilegedStack.id }, include: { attempts: true, approvals: true } });
      return r?.status === "awaiting_approval" && r.approvals.some((a) => a.action === "privileged_capability") ? r : null;
    });
    expect(privileged.attempts).toMatchObject([{ status: "queued", startedAt: null }]);
    const launch = privileged.approvals.find((a) => a.action === "privileged_capability")!;
    expect(launch.status).toBe("pending");
    // It works on a branch of its own, made at the demo run's commit, so it holds nothing on main.
    expect(privileged.headBranch).toBe(DEMO_PRIVILEGED_BRANCH);
    expect(await resolveRevision(bareRepoPath(dataDir, DEMO_REPOSITORY), DEMO_PRIVILEGED_BRANCH)).toBe(privileged.headSha);

    // The story works in any order: a newcomer who rejects the demo run's push while the launch
    // waits gets a fix run at once, not "waiting for run #N to end". Asked through the hook the
    // reject procedure calls, in a transaction rolled back so the push stays for the rest.
    const demoRun = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: demoRunId }, select: { id: true, repositoryId: true, pullRequestId: true, headBranch: true } });
    const rollback = new Error("rolled back on purpose");
    let onReject: Awaited<ReturnType<typeof fixForwardOnApprovalRejection>> | null = null;
    await expect(
      db.$transaction(async (tx) => {
        onReject = await fixForwardOnApprovalRejection(tx, { approval: { id: push.id, action: push.action, targetBranch: push.targetBranch, run: demoRun }, reason: "not this way", by: demoUsers.maintainer.email, now: new Date() });
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(onReject).toMatchObject({ kind: "fix_intended" });

    // The flaky test: read as flaky, rerun once on the local CI, failed the same way, escalated.
    const flakySha = (await resolveRevision(bareRepoPath(dataDir, DEMO_REPOSITORY), DEMO_FLAKY_BRANCH))!;
    const triage = await until("the flaky check to be rerun and escalated", async () => {
      const rows = await db.triageDecision.findMany({ where: { headSha: flakySha }, orderBy: { createdAt: "asc" } });
      return rows.length >= 2 && rows[1]!.notificationId ? rows : null;
    });
    expect(triage.map((t) => [t.disposition, t.action])).toEqual([
      ["rerun_once", "rerun_check"],
      ["escalate_to_owner", "notify_owner"],
    ]);
    expect(triage[1]!.actionDetail).toMatch(/flaky_failure_reproduced_escalates/);
    expect(await db.notification.count({ where: { id: triage[1]!.notificationId! } })).toBe(1);

    // The story panel says each of these, with links that open.
    const { scenes } = await demoStory({ db, repositoryIds: "all" });
    const by = Object.fromEntries(scenes.map((s) => [s.key, s]));
    expect(by.loop!.summary).toMatch(/Approve the push/);
    expect(by.loop!.links.map((l) => l.href)).toContain(`/approvals/${push.id}`);
    expect(by.privileged!.summary).toMatch(new RegExp(`Run #${privileged.number} .*\\(pending\\)`));
    expect(by.privileged!.links[0]).toEqual({ label: "Review the launch", href: `/approvals/${launch.id}` });
    expect(by.cost_cap!.summary).toMatch(new RegExp(`Run #${capped.number}: Cost cap reached`));
    expect(by.flaky!.summary).toMatch(/reran it once; it failed the same way and triage escalated it/);
    expect(by.flaky!.links.map((l) => l.label)).toContain("Notifications");
    for (const s of scenes) expect(s.how, s.key).not.toBeNull();

    // A newcomer approves the privileged launch: the fork launches and leaves its own patch.
    await approve(launch.id);
    await until("the privileged fork to launch and leave a patch", async () => (await runStatus(privileged.id)) === "awaiting_approval" && (await db.dispatchAttempt.count({ where: { runId: privileged.id, status: "succeeded" } })) === 1);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: launch.id } })).toMatchObject({ status: "executed" });

    // A newcomer approves the push: the commit lands in the local forge and the check goes green.
    await approve(push.id);
    const executed = await until("the push to execute", async () => {
      const a = await db.approvalRequest.findUniqueOrThrow({ where: { id: push.id }, include: { writeBack: true } });
      return a.status === "executed" || a.status === "failed" ? a : null;
    });
    expect(executed.status).toBe("executed");
    const landed = executed.writeBack!.externalRef!;
    expect(await resolveRevision(bareRepoPath(dataDir, DEMO_REPOSITORY), push.targetBranch!)).toBe(landed);
    const rerun = await until("the rerun of the check", async () => db.pipeline.findFirst({ where: { headSha: landed, conclusion: { not: null } } }));
    expect(rerun.conclusion).toBe("success");
    await until("the demo run to succeed", async () => (await runStatus(demoRunId)) === "succeeded");

    // Nothing the demo started failed for want of the internet, a commit or a command.
    const failed = await db.agentDispatchRun.findMany({ where: { createdAt: { gte: startedAt }, status: "failed" }, select: { id: true, attempts: { select: { exitReason: true } } } });
    expect(failed.map((r) => r.id)).toEqual([capped.id]);
  });

  it("every seeded suggestion a maintainer dispatches ends with a result or a patch", { timeout: 240_000 }, async () => {
    const suggestions = await db.agentDispatchRun.findMany({ where: { status: "suggested" }, select: { id: true, number: true } });
    expect(suggestions.length).toBeGreaterThan(0);
    for (const s of suggestions) await callerFor(maintainer()).runs.dispatch({ runId: s.id });
    for (const s of suggestions) {
      const ended = await until(`run #${s.number} to end`, async () => {
        const status = await runStatus(s.id);
        return ["queued", "running"].includes(status) ? null : status;
      }, 180_000);
      expect([ended, s.number]).toEqual([expect.stringMatching(/^(awaiting_approval|succeeded)$/), s.number]);
    }
  });

  it("is idempotent: a restarted worker's bootstrap starts no scene twice", { timeout: 120_000 }, async () => {
    const before = await db.agentDispatchRun.count();
    const pipelines = await db.pipeline.count();
    // The push moved main: its green check made no run, so the bootstrap waits briefly and says so.
    const again = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 90_000, toolchainNodeModules: toolchain, runWaitMs: 1_000 });
    expect(again.summary).not.toMatch(/scene/);
    expect(await db.agentDispatchRun.count()).toBe(before);
    expect(await db.pipeline.count()).toBe(pipelines);
  });
});
