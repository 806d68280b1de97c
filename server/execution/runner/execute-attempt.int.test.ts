import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import { getDb } from "@/server/db";
import { contentDigest } from "@/server/lib/digest";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";
import { executeWriteBackTask } from "@/server/queue/tasks/execute-write-back";
import { runReactions } from "@/server/queue/testing/reactions";

const scenario = getBuiltInScenario("sum-off-by-one")!;
const files = scenario.assumes!.files;
const patch = scenario.artifacts.find((a) => a.name === "fix.patch")!;

async function setup(opts: { poolConcurrency?: number; spec?: ReturnType<typeof scriptedSpec>; role?: "viewer" | "maintainer" } = {}) {
  const user = await createUser();
  const local = await createLocalRepository({ files, members: [[user, opts.role ?? "maintainer"]] });
  const pool = await createPool({ concurrency: opts.poolConcurrency ?? 2 });
  // Tests in this file share a database: only this test's pool is eligible.
  await getDb().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const stack = await createStack(opts.spec ?? scriptedSpec());
  const ctx = testWorkerContext({ dataDir: local.dataDir });
  const run = () => createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
  return { user, local, pool, stack, ctx, run };
}

const eventsOf = (runId: string) => getDb().runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } });

describe("run.dispatch: admission and attempt execution", () => {
  it("admits a queued run, replays the scripted agent, stores the patch with its digest and awaits approval", async () => {
    const { ctx, run, pool, local } = await setup();
    const r = await run();
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const db = getDb();

    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true, artifacts: true, approvals: true, decisions: true } });
    expect(after.status).toBe("awaiting_approval");
    expect(after.runnerPoolId).toBe(pool.id);
    expect(after.admission).toMatchObject({ admitted: true, poolName: pool.name, trustTier: "trusted", runtimeServiceAccount: `${pool.name}-runtime` });
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({ status: "succeeded", number: 1, fencingToken: 1, runnerPoolId: pool.id });
    expect(after.attempts[0]!.adapterSessionId).toMatch(/^scripted-/);
    expect(after.inputTokens).toBeGreaterThan(0);

    // The patch is stored with the digest of its bytes, and the approval points at it.
    const stored = after.artifacts.find((a) => a.kind === "patch")!;
    expect(stored.digest).toBe(contentDigest(patch.content));
    expect(stored.content).toBe(patch.content);
    expect(after.artifacts.map((a) => a.name).sort()).toEqual(["diagnosis.md", "fix.patch"]);
    expect(after.approvals).toHaveLength(1);
    const approval = after.approvals[0]!;
    expect(approval).toMatchObject({ status: "pending", action: "push_commits", targetBranch: "main", targetHeadSha: local.sha, artifactId: stored.id, artifactDigest: stored.digest });
    expect(approval.presented).toMatchObject({ prompt: r.prompt, runnerPool: { name: pool.name }, stack: { adapter: "scripted" }, artifact: { digest: stored.digest } });
    expect(approval.expiresAt.getTime()).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
    // Runner selection (two properties) and the change gate, each stored with its proof.
    expect(after.decisions.map((d) => d.property).sort()).toEqual(["approval_required", "pool_trust_tier", "privileged_credentials"]);
    expect(approval.policyDecisionId).toBe(after.decisions.find((d) => d.property === "approval_required")!.id);

    const events = await eventsOf(r.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(after.lastEventSeq).toBe(events.length);
    const types = new Set(events.map((e) => e.type));
    for (const t of ["queue", "admission", "status", "message", "tool_call", "tool_result", "heartbeat", "cost", "subagent_started", "subagent_completed", "artifact_produced", "write_back_requested", "approval_requested"]) {
      expect(types, t).toContain(t);
    }
    const produced = events.filter((e) => e.type === "artifact_produced").map((e) => e.payload as { artifactId?: string; digest: string });
    expect(produced).toHaveLength(2);
    expect(produced.every((p) => after.artifacts.some((a) => a.id === p.artifactId && a.digest === p.digest))).toBe(true);
    const runStatuses = events.filter((e) => e.type === "status" && (e.payload as { scope: string }).scope === "run").map((e) => (e.payload as { to: string }).to);
    expect(runStatuses).toEqual(["running", "awaiting_approval"]);
    // The workspace of a successful attempt is removed; its artifacts stay.
    expect(existsSync(resolve(local.dataDir, "workspaces", r.id, "attempt-1"))).toBe(false);
    expect(existsSync(resolve(local.dataDir, "artifacts", r.id, "attempt-1", "fix.patch"))).toBe(true);
  });

  it("a patch the repository exempted is not held: it is pushed through the change gate's exception, shown on the run", async () => {
    const { ctx, run, local } = await setup({ spec: scriptedSpec({ approvalMode: "exceptions_allowed" }) });
    await getDb().repository.update({ where: { id: local.repository.id }, data: { writeBackExceptions: ["push_commits"] } });
    const r = await run();
    // The repository's own code (a push to main), as evaluation records it: a fork's would wait for a person.
    await getDb().agentDispatchRun.update({ where: { id: r.id }, data: { origin: "repository" } });
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const db = getDb();
    const held = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { approvals: true, writeBacks: true, decisions: true } });
    expect(held.approvals).toHaveLength(0);
    expect(held.writeBacks).toHaveLength(1);
    const wb = held.writeBacks[0]!;
    expect(wb).toMatchObject({ kind: "push_commits", outcome: "pending", approvedBy: null, artifactDigest: contentDigest(patch.content) });
    expect(wb.target).toMatchObject({ branch: "main", headSha: local.sha, exception: expect.stringContaining("repository exception for push commits") });
    expect(held.decisions.find((d) => d.property === "approval_required")).toMatchObject({ ruleName: "exempted_write_back_proceeds" });
    expect(await db.auditEntry.count({ where: { objectId: wb.id, action: "writeback.exempt" } })).toBe(1);
    const statusEvents = (await eventsOf(r.id)).map((e) => e.payload as { scope?: string; to: string; reason: string }).filter((p) => p.scope === "run");
    expect(statusEvents.at(-1)).toMatchObject({ to: "awaiting_approval", reason: expect.stringContaining("a repository exception lets it be pushed without approval") });
    // The job the gate queued executes it: the commit lands and the run settles.
    const job = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`writeback:${wb.id}`}`;
    expect(job[0]?.n).toBe(1);
    await executeWriteBackTask({ writeBackId: wb.id }, ctx);
    const { resolveRevision } = await import("@/server/forges/local/repositories");
    expect((await db.writeBack.findUniqueOrThrow({ where: { id: wb.id } })).externalRef).toBe(await resolveRevision(local.repoPath, "main"));
    await runReactions(); // the run settles in the approval.decided job
    expect((await db.agentDispatchRun.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("succeeded");
  });

  it("a diagnosis-only run (no patch) succeeds, with the command adapter's events and cost on the run", async () => {
    const script = [
      "const fs = require('node:fs');",
      "const out = (e) => process.stdout.write(JSON.stringify(e) + '\\n');",
      "out({ type: 'message', payload: { role: 'assistant', text: 'cwd ' + process.cwd() } });",
      "out({ type: 'cost', payload: { inputTokens: 1000, outputTokens: 200, usd: 0.5 } });",
      "fs.writeFileSync(process.env.AIRLOCK_ARTIFACTS_DIR + '/diagnosis.md', '# Root cause');",
    ].join("\n");
    const spec = scriptedSpec({ adapter: { kind: "command", command: ["node", "-e", script], env: [], outputFormat: "airlock" } });
    const { ctx, run } = await setup({ spec });
    const r = await run();
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { approvals: true, artifacts: true, attempts: true } });
    expect(after.status).toBe("succeeded");
    expect(after.approvals).toHaveLength(0);
    expect(after.artifacts).toMatchObject([{ kind: "diagnosis", name: "diagnosis.md", content: "# Root cause", digest: contentDigest("# Root cause") }]);
    expect(after).toMatchObject({ inputTokens: 1000, outputTokens: 200 });
    expect(after.costUsd.toString()).toBe("0.5");
    const cwd = (await eventsOf(r.id)).find((e) => e.type === "message")!.payload as { text: string };
    expect(after.attempts[0]!.workspacePath).toBe(resolve(ctx.settings.dataDir, "workspaces", r.id, "attempt-1"));
    expect(cwd.text).toBe(`cwd ${after.attempts[0]!.workspacePath}`);
  });

  it("gives the agent only its granted secrets, by value from the server environment, and masks them in the transcript", async () => {
    const value = "s3cr3t-value-7d1f0a9b2c";
    process.env.AIRLOCK_SECRET_DEMO_TOKEN = value;
    const script = [
      "const out = (e) => process.stdout.write(JSON.stringify(e) + '\\n');",
      "out({ type: 'message', payload: { role: 'assistant', text: 'token=' + process.env.DEMO_TOKEN } });",
      "out({ type: 'message', payload: { role: 'assistant', text: 'db=' + (process.env.DATABASE_URL ?? 'none') + ' other=' + (process.env.OTHER_TOKEN ?? 'none') } });",
    ].join("\n");
    const spec = scriptedSpec({ adapter: { kind: "command", command: ["node", "-e", script], env: ["DEMO_TOKEN", "OTHER_TOKEN"], outputFormat: "airlock" } });
    const { ctx, run, stack } = await setup({ spec });
    await getDb().secretGrant.create({ data: { secretName: "DEMO_TOKEN", stackId: stack.id, privileged: false, trustedPoolsOnly: false } });
    const r = await run();
    try {
      await dispatchRunTask({ runId: r.id }, ctx);
      await drain(ctx);
    } finally {
      delete process.env.AIRLOCK_SECRET_DEMO_TOKEN;
    }
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id } });
    expect(after.status).toBe("succeeded");
    expect(after.admission).toMatchObject({ secretsGranted: ["DEMO_TOKEN"], secretsDenied: [{ name: "OTHER_TOKEN", reason: expect.stringMatching(/no grant/) }] });
    const texts = (await eventsOf(r.id)).filter((e) => e.type === "message").map((e) => (e.payload as { text: string }).text);
    expect(texts.some((t) => t.startsWith("token=") && !t.includes(value))).toBe(true);
    expect(JSON.stringify(await eventsOf(r.id))).not.toContain(value);
    expect(JSON.stringify(after.admission)).not.toContain(value);
    expect(texts).toContain("db=none other=none");
  });

  it("puts a fork PR's run on the untrusted pool with unprivileged accounts and no privileged secret", async () => {
    const spec = scriptedSpec({ mcpServers: [{ name: "gh", transport: "http", target: "https://example.test", secrets: ["github-token"], configMaps: [], privileged: false, required: true }] });
    const { ctx, user, local, stack } = await setup({ spec });
    const db = getDb();
    const trusted = await createPool({ trustTier: "trusted", runtimePrivileged: true });
    const sandbox = await createPool({ trustTier: "untrusted" });
    await db.runnerPool.deleteMany({ where: { id: { notIn: [trusted.id, sandbox.id] } } });
    await db.secretGrant.create({ data: { secretName: "github-token", stackId: stack.id, privileged: true, trustedPoolsOnly: false, taskKinds: [] } });
    const r = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id, isFork: true });
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true, decisions: true } });
    expect(after.runnerPoolId).toBe(sandbox.id);
    expect(after.attempts[0]).toMatchObject({ runnerPoolId: sandbox.id, runtimeServiceAccount: `${sandbox.name}-runtime` });
    expect(after.admission).toMatchObject({
      trustTier: "untrusted",
      secretsGranted: [],
      secretsDenied: [{ name: "github-token", reason: "privileged secret: fork PRs never receive privileged secrets" }],
    });
    expect(after.decisions.find((d) => d.property === "pool_trust_tier")).toMatchObject({ value: "untrusted", ruleName: "fork_runs_untrusted" });
    expect(after.decisions.find((d) => d.property === "privileged_credentials")).toMatchObject({ value: false });
  });

  it("refuses a run whose actor is only a viewer: the attempt fails with the reason, nothing starts", async () => {
    const { ctx, run } = await setup({ role: "viewer" });
    const r = await run();
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts[0]).toMatchObject({ status: "failed", exitReason: expect.stringMatching(/only viewer of the repository/) });
    expect(after.admission).toMatchObject({ admitted: false, poolName: null });
    const types = (await eventsOf(r.id)).map((e) => e.type);
    expect(types).toContain("admission");
    expect(types).not.toContain("message");
  });

  it("an adapter that cannot start fails the attempt with the reason and never hangs", async () => {
    const spec = scriptedSpec({ adapter: { kind: "command", command: ["definitely-not-a-command-7f3a"], env: [], outputFormat: "airlock" } });
    const { ctx, run } = await setup({ spec });
    const r = await run();
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts[0]).toMatchObject({ status: "failed", exitReason: expect.stringMatching(/command not found/) });
  });

  it("never runs more attempts on a pool than its concurrency; the waiting run starts when a slot frees", async () => {
    const { ctx, run } = await setup({ poolConcurrency: 1 });
    const [a, b] = [await run(), await run()];
    await Promise.all([dispatchRunTask({ runId: a.id }, ctx), dispatchRunTask({ runId: b.id }, ctx)]);
    const db = getDb();
    const active = await db.dispatchAttempt.findMany({ where: { runId: { in: [a.id, b.id] } }, select: { runId: true, status: true } });
    expect(active.filter((x) => x.status === "starting" || x.status === "running")).toHaveLength(1);
    expect(active.filter((x) => x.status === "queued")).toHaveLength(1);
    await drain(ctx);
    const waiting = active.find((x) => x.status === "queued")!.runId;
    // The waiting run's job was re-added (and woken when the slot freed); run it now.
    await dispatchRunTask({ runId: waiting }, ctx);
    await drain(ctx);
    const statuses = await db.agentDispatchRun.findMany({ where: { id: { in: [a.id, b.id] } }, select: { status: true } });
    expect(statuses.map((s) => s.status)).toEqual(["awaiting_approval", "awaiting_approval"]);
  });

  it("a repeated dispatch job is a no-op", async () => {
    const { ctx, run } = await setup();
    const r = await run();
    await dispatchRunTask({ runId: r.id }, ctx);
    await dispatchRunTask({ runId: r.id }, ctx);
    await drain(ctx);
    await dispatchRunTask({ runId: r.id }, ctx);
    expect(await getDb().dispatchAttempt.count({ where: { runId: r.id } })).toBe(1);
  });
});
