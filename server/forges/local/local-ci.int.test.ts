import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import { getDb } from "@/server/db";
import { contentDigest } from "@/server/lib/digest";
import { createLocalRepository, createPool, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { startWorker } from "@/server/queue/worker";
import { bootstrapDemo, DEMO_BUDGET_STACK, DEMO_REPOSITORY } from "./demo";
import { git } from "./git";
import { runLocalCheck } from "./local-ci";
import { bareRepoPath, checkoutAt } from "./repositories";

// End to end on one machine: the local CI runs a real failing check (vitest, in a clean
// checkout), the failure goes through the trigger path (ingest -> delivery.evaluate -> rule ->
// run), a worker runs the scripted agent, its patch is stored with its digest, and the run
// waits for approval. The patch applies to the commit that failed.

const scenario = getBuiltInScenario("sum-off-by-one")!;
const patch = scenario.artifacts.find((a) => a.name === "fix.patch")!;
const toolchain = resolve("node_modules");
let worker: Awaited<ReturnType<typeof startWorker>>;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "airlock-ci-data-"));
  await createPool({ concurrency: 4 });
  worker = await startWorker({ settings: { dataDir, scriptedSpeed: 50, toolchainNodeModules: toolchain }, demo: false });
});
afterAll(async () => {
  await worker.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function repoWithRule(action: "auto_run" | "suggest", fullName?: string) {
  const db = getDb();
  const local = await createLocalRepository({ files: scenario.assumes!.files, checkCommand: "npm test" });
  // The worker's data dir holds the forge: move the repository there.
  // Auto-run needs the repository's consent too (autoRunOnFailedCheck), not only the rule's.
  const repository = await db.repository.update({
    where: { id: local.repository.id },
    data: { autoRunOnFailedCheck: action === "auto_run", ...(fullName ? { fullName } : {}) },
  });
  await git(["clone", "--quiet", "--bare", local.repoPath, bareRepoPath(dataDir, repository.fullName)]);
  const stack = await createStack(scriptedSpec());
  await db.triggerRule.create({
    data: { name: "local failing test", kind: "failed_check", repositoryId: repository.id, workflow: "local-ci", job: "test", stackId: stack.id, taskKind: "repair", action },
  });
  return { repository, sha: local.sha, stack };
}

describe("local CI -> trigger path -> agent -> approval", () => {
  it("a failing check creates a run; the scripted attempt's patch is stored with its digest and awaits approval", { timeout: 120_000 }, async () => {
    const db = getDb();
    const { repository, sha } = await repoWithRule("auto_run");
    const check = await runLocalCheck({ db, dataDir, repositoryId: repository.id, timeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(check).toMatchObject({ conclusion: "failure", exitCode: 1, delivery: { status: "accepted" } });
    expect(check.failureSignature).toMatch(/^[0-9a-f]{16}$/);
    const job = await db.job.findUniqueOrThrow({ where: { id: check.jobId }, include: { pipeline: true } });
    expect(job).toMatchObject({ name: "test", step: "npm test", status: "completed", conclusion: "failure", exitCode: 1, failureSignature: check.failureSignature });
    expect(job.logExcerpt).toContain("expected 3 to be 6");
    expect(job.durationMs).toBeGreaterThan(0);
    expect(job.pipeline).toMatchObject({ workflowName: "local-ci", headSha: sha, status: "completed", conclusion: "failure", triggeredByRunId: null });

    const run = await until("the run to await approval", async () => {
      const r = await db.agentDispatchRun.findFirst({ where: { pipelineId: check.pipelineId }, include: { artifacts: true, approvals: true } });
      return r && (r.status === "awaiting_approval" || r.status === "failed") ? r : null;
    });
    expect(run).toMatchObject({ status: "awaiting_approval", jobId: job.id, headSha: sha, source: "failed_check", isFork: false });
    const stored = run.artifacts.find((a) => a.kind === "patch")!;
    expect(stored.digest).toBe(contentDigest(patch.content));
    expect(run.approvals).toMatchObject([{ status: "pending", artifactId: stored.id, artifactDigest: stored.digest, targetHeadSha: sha }]);
    const types = (await db.runEvent.findMany({ where: { runId: run.id }, orderBy: { seq: "asc" } })).map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["trigger_matched", "context_assembled", "status"]);
    expect(types).toEqual(expect.arrayContaining(["admission", "queue", "message", "artifact_produced", "approval_requested"]));

    // The stored patch applies to the commit whose check failed.
    const work = await mkdtemp(join(tmpdir(), "airlock-apply-"));
    try {
      await checkoutAt(bareRepoPath(dataDir, repository.fullName), sha, join(work, "c"));
      await writeFile(join(work, "fix.patch"), stored.content!);
      await expect(git(["apply", "--check", join(work, "fix.patch")], { cwd: join(work, "c") })).resolves.toBe("");
    } finally {
      await rm(work, { recursive: true, force: true });
    }

    // A rerun of the check for this run is a new Pipeline linked to it; the same failure is deduplicated.
    const rerun = await runLocalCheck({ db, dataDir, repositoryId: repository.id, sha, triggeredByRunId: run.id, timeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(rerun.pipelineId).not.toBe(check.pipelineId);
    expect(await db.pipeline.findUniqueOrThrow({ where: { id: rerun.pipelineId } })).toMatchObject({ triggeredByRunId: run.id, event: "rerun" });
    await until("the rerun's delivery to be evaluated", () =>
      db.webhookDelivery.findFirst({ where: { deliveryId: rerun.delivery!.deliveryId, outcome: { not: "received" } } }),
    );
    // On a mismatch, both logs: what differed between two reports of the same failure.
    const logs = (await db.job.findMany({ where: { id: { in: [check.jobId, rerun.jobId] } } })).map((j) => j.logExcerpt);
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repository.id } }), JSON.stringify(logs)).toBe(1);
  });

  it("a passing check records a green pipeline and creates no run", async () => {
    const db = getDb();
    const { repository } = await repoWithRule("auto_run");
    await db.repository.update({ where: { id: repository.id }, data: { checkCommand: "node -e 'process.exit(0)'" } });
    const check = await runLocalCheck({ db, dataDir, repositoryId: repository.id, timeoutMs: 30_000, toolchainNodeModules: null });
    expect(check).toMatchObject({ conclusion: "success", exitCode: 0, delivery: null, failureSignature: null });
    expect(await db.webhookDelivery.count({ where: { deliveryId: `local-ci-${check.pipelineId}` } })).toBe(0);
  });

  it("hostile: a check runs the repository's code in the sandbox: not root, no server secret, no data folder, no network", { timeout: 120_000 }, async () => {
    const db = getDb();
    const { repository } = await repoWithRule("suggest");
    // What a fork PR's package.json could make `npm test` do: read the server's files and
    // environment, write outside its checkout, call the database.
    await writeFile(join(dataDir, "server-secret.txt"), "airlock-server-secret-value\n");
    process.env.AIRLOCK_TEST_SERVER_SECRET = "airlock-env-secret-value";
    // Each marker is quoted apart in the command, so only its output (not the log's "$ command"
    // header) can contain it whole.
    const probe = [
      "echo uid=$(id -u)",
      `cat ${join(dataDir, "server-secret.txt")} 2>/dev/null || echo data-folder-"hidden"`,
      "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n' | grep -c AIRLOCK_TEST_SERVER_SECRET || true",
      `touch /etc/pwned 2>/dev/null || echo etc-read-"only"`,
      `node -e "require('net').connect(${new URL(process.env.DATABASE_URL ?? "postgres://h:5432/d").port || 5432}, '127.0.0.1').on('connect', () => { console.log('db-' + 'reached'); process.exit(0) }).on('error', () => { console.log('no-' + 'network'); process.exit(0) })"`,
      "exit 1",
    ].join("; ");
    await db.repository.update({ where: { id: repository.id }, data: { checkCommand: probe } });
    try {
      const check = await runLocalCheck({ db, dataDir, repositoryId: repository.id, timeoutMs: 90_000, toolchainNodeModules: null });
      const job = await db.job.findUniqueOrThrow({ where: { id: check.jobId } });
      const log = job.logExcerpt ?? "";
      expect(check.conclusion, log).toBe("failure");
      expect(log).toContain("uid=1000");
      expect(log).toContain("data-folder-hidden");
      expect(log).toContain("etc-read-only");
      expect(log).toContain("no-network");
      expect(log).not.toContain("airlock-server-secret-value");
      expect(log).not.toContain("airlock-env-secret-value");
      expect(log).not.toContain("db-reached");
    } finally {
      delete process.env.AIRLOCK_TEST_SERVER_SECRET;
    }
  });

  it("the demo bootstrap pushes the demo repository, runs its check once, and dispatches the suggestion (idempotent)", { timeout: 120_000 }, async () => {
    const db = getDb();
    const { repository } = await repoWithRule("suggest", DEMO_REPOSITORY);
    // The bootstrap creates the bare repository itself: start from none.
    await rm(bareRepoPath(dataDir, DEMO_REPOSITORY), { recursive: true, force: true });
    const first = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(first.summary).toMatch(/^dispatched the suggested run/);
    const run = await until("the demo run to await approval", async () => {
      const r = await db.agentDispatchRun.findUnique({ where: { id: first.runId! } });
      return r?.status === "awaiting_approval" ? r : null;
    });
    expect(run.headSha).toBe(first.sha);
    expect(await db.auditEntry.findFirst({ where: { objectId: run.id, action: "run.dispatch" } })).toMatchObject({ actor: "airlock demo bootstrap" });

    const again = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(again).toMatchObject({ sha: first.sha, pipelineId: first.pipelineId, runId: run.id });
    expect(await db.pipeline.count({ where: { repositoryId: repository.id } })).toBe(1);
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repository.id } })).toBe(1);
  });

  it("starts the cost-cap scene on purpose: a fork of the demo run onto the budget stack, stopped at its cap by the meter (once)", { timeout: 120_000 }, async () => {
    const db = getDb();
    // Runs after the test above: the demo repository and its demo run exist.
    const demo = await db.agentDispatchRun.findFirstOrThrow({ where: { repository: { fullName: DEMO_REPOSITORY } } });
    const budget = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0.04, maxRetries: 0 } }), DEMO_BUDGET_STACK);
    const result = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(result.summary).toMatch(/the cost-cap scene/);
    const fork = await until("the cost-cap fork to end", async () => {
      const r = await db.agentDispatchRun.findFirst({ where: { parentRunId: demo.id, stackId: budget.id }, include: { attempts: true } });
      return r && ["failed", "succeeded", "awaiting_approval"].includes(r.status) ? r : null;
    });
    expect(fork.source).toBe("fork");
    expect(fork.status).toBe("failed");
    expect(fork.attempts.map((a) => a.exitReason)).toEqual([expect.stringMatching(/^Cost cap reached: stopped at \$0\.\d+ of the \$0\.04\d* cap/)]);
    // Started once: a restarted worker's bootstrap adds no second fork.
    const again = await bootstrapDemo({ db, dataDir, ciTimeoutMs: 60_000, toolchainNodeModules: toolchain });
    expect(again.summary).not.toMatch(/cost-cap/);
    expect(await db.agentDispatchRun.count({ where: { parentRunId: demo.id, stackId: budget.id } })).toBe(1);
  });
});
