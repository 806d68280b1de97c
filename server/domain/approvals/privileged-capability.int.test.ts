import { describe, expect, it } from "vitest";
import { getDb, type Prisma } from "@/server/db";
import { claimNextAttempt } from "@/server/domain/run-engine/claim-attempt";
import { launchDigest } from "@/server/domain/approvals/privileged-launch";
import { stackSnapshot, type StackSpec } from "@/server/domain/stacks/spec";
import { getPolicy, savePolicyVersion } from "@/server/domain/policy/store";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createUser } from "@/server/testing/factories";
import { zPresented } from "./schemas";

// Privileged work waits for a person before it starts: admission that would grant a privileged
// secret, a privileged MCP server or open network holds the attempt and asks for an approval of
// exactly what will launch (real PostgreSQL, real claim, real tRPC callers).

const db = () => getDb();

const privilegedSpec = (patch: Partial<StackSpec> = {}) =>
  scriptedSpec({
    tools: ["Read", "Bash(npm test:*)"],
    skills: ["triage-notes"],
    subagents: [{ name: "reviewer", role: "Reviews the patch before it is proposed", tools: ["Read"] }],
    mcpServers: [{ name: "gh", transport: "http", target: "https://api.github.test/mcp", secrets: ["gh-token"], configMaps: ["gh-config"], privileged: false, required: true }],
    ...patch,
  });

async function setup(opts: { spec?: StackSpec; secretPrivileged?: boolean; networkMode?: "restricted" | "open" } = {}) {
  const [dispatcher, approver, viewer] = [await createUser(), await createUser(), await createUser()];
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[dispatcher, "maintainer"], [approver, "maintainer"], [viewer, "viewer"]] });
  const pool = await createPool({ trustTier: "trusted", runtimePrivileged: true, networkMode: opts.networkMode, allowedHosts: ["registry.npmjs.org"] });
  const untrusted = await createPool({ trustTier: "untrusted" });
  // Tests in this file share a database: only this test's pools are eligible.
  await db().runnerPool.deleteMany({ where: { id: { notIn: [pool.id, untrusted.id] } } });
  const stack = await createStack(opts.spec ?? privilegedSpec());
  const secret = await db().secretGrant.create({ data: { secretName: "gh-token", stackId: stack.id, privileged: opts.secretPrivileged ?? true, trustedPoolsOnly: true, taskKinds: [] } });
  await db().configGrant.create({ data: { configMapName: "gh-config", stackId: stack.id, trustedPoolsOnly: false, taskKinds: [] } });
  const run = (extra: { isFork?: boolean } = {}) => createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: dispatcher.id, prompt: "Fix the failing check in calc.js.", ...extra });
  return { dispatcher, approver, viewer, local, pool, untrusted, stack, secret, run };
}

const claim = (runId: string, sandbox?: { available: boolean; reason: string | null }) =>
  claimNextAttempt({ db: db(), runId, workerRef: "test/privileged", kubernetesAvailable: false, sandbox });
const approvalsOf = (runId: string) => db().approvalRequest.findMany({ where: { runId, action: "privileged_capability" }, orderBy: { createdAt: "asc" } });
const shown = { artifactDigest: null, headSha: null };

async function heldApproval(runId: string) {
  const result = await claim(runId);
  expect(result).toMatchObject({ kind: "awaiting_approval" });
  const [approval] = await approvalsOf(runId);
  if (!approval) throw new Error("no approval");
  return { approval, presented: zPresented.parse(approval.presented) };
}

describe("privileged capabilities wait for a person", () => {
  it("a privileged grant does not launch: the run waits with an approval showing exactly what will launch", async () => {
    const { run, pool } = await setup();
    const r = await run();
    const { approval, presented } = await heldApproval(r.id);
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.status).toBe("awaiting_approval");
    expect(after.attempts).toMatchObject([{ status: "queued", startedAt: null, runnerRef: null }]);
    expect(approval).toMatchObject({ status: "pending", action: "privileged_capability" });
    expect(approval.policyDecisionId).not.toBeNull();
    const launch = presented.launch!;
    expect(launch.attemptId).toBe(after.attempts[0]!.id);
    expect(launch.digest).toBe(launchDigest(launch.record));
    expect(launch.record).toEqual({
      prompt: "Fix the failing check in calc.js.",
      promptHash: r.promptHash,
      contextDigest: r.contextDigest,
      contextLabels: ["repository"],
      stack: expect.objectContaining({
        digest: r.stackDigest,
        model: "local/scripted",
        adapter: "scripted",
        tools: ["Read", "Bash(npm test:*)"],
        mcpServers: [{ name: "gh", transport: "http", target: "https://api.github.test/mcp", secrets: ["gh-token"], configMaps: ["gh-config"], privileged: false, required: true }],
        skills: ["triage-notes"],
        subagents: [{ name: "reviewer", role: "Reviews the patch before it is proposed", tools: ["Read"] }],
      }),
      pool: { name: pool.name, trustTier: "trusted", kind: "local" },
      runtimeServiceAccount: { name: `${pool.name}-runtime`, namespace: "airlock", privileged: true },
      runnerServiceAccount: { name: `${pool.name}-runner`, namespace: "airlock", privileged: false },
      secrets: [{ name: "gh-token", privileged: true }],
      configMaps: ["gh-config"],
      network: { mode: "restricted", hosts: ["registry.npmjs.org"] },
      privileged: [{ kind: "secret", name: "gh-token", why: expect.any(String) }],
    });
    // The presented record's own fields agree with the launch record.
    expect(presented).toMatchObject({ action: "privileged_capability", runnerPool: { name: pool.name }, secrets: { granted: ["gh-token"] }, configMaps: { granted: ["gh-config"] } });
    const decision = await db().policyDecision.findUniqueOrThrow({ where: { id: approval.policyDecisionId! } });
    expect(decision).toMatchObject({ property: "approval_required", value: true, ruleName: "sensitive_write_back_needs_approval", subject: `privileged_capability:attempt:${launch.attemptId}` });
    const events = await db().runEvent.findMany({ where: { runId: r.id }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["admission", "status", "approval_requested"]));
    // Claiming again does not launch it or ask twice.
    expect(await claim(r.id)).toMatchObject({ kind: "skipped" });
    expect(await approvalsOf(r.id)).toHaveLength(1);
  });

  it("approving launches the attempt with exactly the approved grants; a replayed approve and dispatch launch once", async () => {
    const { run, approver } = await setup();
    const r = await run();
    const { approval, presented } = await heldApproval(r.id);
    await callerFor(approver).approvals.approve({ approvalId: approval.id, ...shown });
    await expect(callerFor(approver).approvals.approve({ approvalId: approval.id, ...shown })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/already approved/) });
    expect((await db().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("queued");

    const results = [await claim(r.id), await claim(r.id)];
    expect(results.map((x) => x.kind)).toEqual(["started", "skipped"]);
    const started = results[0]!;
    if (started.kind !== "started") throw new Error("not started");
    const record = presented.launch!.record;
    expect(started.attempt.id).toBe(presented.launch!.attemptId);
    expect(started.admission.secretsGranted.map((s) => ({ name: s.name, privileged: s.privileged }))).toEqual(record.secrets);
    expect(started.admission.configMapsGranted.map((c) => c.name)).toEqual(record.configMaps);
    expect(started.admission.runtimeServiceAccount).toEqual(record.runtimeServiceAccount);
    expect(started.admission.runnerServiceAccount).toEqual(record.runnerServiceAccount);
    expect(started.pool.name).toBe(record.pool.name);
    const attempts = await db().dispatchAttempt.findMany({ where: { runId: r.id } });
    expect(attempts).toMatchObject([{ status: "starting", runtimeServiceAccount: record.runtimeServiceAccount.name, runnerServiceAccount: record.runnerServiceAccount.name }]);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approval.id } })).toMatchObject({ status: "executed", decidedById: approver.id });
    expect(await db().auditEntry.count({ where: { objectId: approval.id, action: "approval.approve" } })).toBe(1);
  });

  it("an edited stack between request and approve makes the approval stale: refused, and re-admission asks again", async () => {
    const { run, approver } = await setup();
    const r = await run();
    const { approval } = await heldApproval(r.id);
    // Runs keep a frozen snapshot, so an edit can only be a write to the row: the approval must not launch it.
    const edited = privilegedSpec({ tools: ["Read", "Bash"] });
    const snap = stackSnapshot({ id: r.stackId!, name: "edited", version: 2, spec: edited });
    await db().agentDispatchRun.update({ where: { id: r.id }, data: { stackSnapshot: snap.snapshot as Prisma.InputJsonValue, stackDigest: snap.digest } });

    await expect(callerFor(approver).approvals.approve({ approvalId: approval.id, ...shown })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/stale: the stack changed/) });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approval.id } })).toMatchObject({ status: "expired", reason: expect.stringMatching(/^stale/) });
    expect(await db().dispatchAttempt.count({ where: { runId: r.id, status: { not: "queued" } } })).toBe(0);

    // Re-admission: a new request for what would launch now; the old one can never launch.
    const again = await claim(r.id);
    expect(again.kind).toBe("awaiting_approval");
    const [old, next] = await approvalsOf(r.id);
    expect(old!.id).toBe(approval.id);
    expect(zPresented.parse(next!.presented).launch!.record.stack.tools).toEqual(["Read", "Bash"]);
    await expect(callerFor(approver).approvals.approve({ approvalId: approval.id, ...shown })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("a grant changed after the approval makes it stale at launch: nothing launches, a new approval is asked", async () => {
    const { run, approver, secret } = await setup();
    const r = await run();
    const { approval } = await heldApproval(r.id);
    await callerFor(approver).approvals.approve({ approvalId: approval.id, ...shown });
    await db().configGrant.deleteMany({ where: { configMapName: "gh-config" } });
    expect(secret.privileged).toBe(true);

    const result = await claim(r.id);
    expect(result.kind).toBe("awaiting_approval");
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approval.id } })).toMatchObject({ status: "failed", reason: expect.stringMatching(/stale: the config maps changed/) });
    const [, next] = await approvalsOf(r.id);
    expect(next).toMatchObject({ status: "pending" });
    expect(zPresented.parse(next!.presented).launch!.record.configMaps).toEqual([]);
    expect(await db().dispatchAttempt.findMany({ where: { runId: r.id } })).toMatchObject([{ status: "queued" }]);
  });

  it("rejecting ends the run with the reason; the attempt never launches", async () => {
    const { run, approver } = await setup();
    const r = await run();
    const { approval } = await heldApproval(r.id);
    await callerFor(approver).approvals.reject({ approvalId: approval.id, reason: "gh-token is not needed to diagnose" });
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts).toMatchObject([{ status: "failed", exitReason: expect.stringMatching(/rejected its privileged capabilities: gh-token is not needed to diagnose/) }]);
    const status = await db().runEvent.findFirst({ where: { runId: r.id, type: "status" }, orderBy: { seq: "desc" } });
    expect(status?.payload).toMatchObject({ scope: "run", from: "awaiting_approval", to: "failed", reason: expect.stringContaining("gh-token is not needed to diagnose") });
    expect(await claim(r.id)).toMatchObject({ kind: "skipped" });
  });

  it("a run with nothing privileged launches with no approval", async () => {
    const { run } = await setup({ secretPrivileged: false });
    const r = await run();
    expect(await claim(r.id)).toMatchObject({ kind: "started" });
    expect(await approvalsOf(r.id)).toHaveLength(0);
  });

  it("a privileged MCP server and open network wait for a person too", async () => {
    const spec = privilegedSpec({ adapter: { kind: "command", command: ["true"], env: [], outputFormat: "auto" }, mcpServers: [{ name: "prod-db", transport: "stdio", target: "prod-db-mcp --read-only", secrets: [], configMaps: [], privileged: true, required: true }] });
    const { run } = await setup({ spec, networkMode: "open" });
    const r = await run();
    expect(await claim(r.id, { available: true, reason: null })).toMatchObject({ kind: "awaiting_approval" });
    const [approval] = await approvalsOf(r.id);
    const record = zPresented.parse(approval!.presented).launch!.record;
    expect(record.privileged.map((c) => [c.kind, c.name])).toEqual([["mcp_server", "prod-db"], ["network", "open"]]);
    expect(record.network.mode).toBe("open");
  });

  it("attackers: a viewer cannot approve, the run's own dispatcher cannot approve it (two-person rule)", async () => {
    const { run, viewer, dispatcher } = await setup();
    const r = await run();
    const { approval } = await heldApproval(r.id);
    await expect(callerFor(viewer).approvals.approve({ approvalId: approval.id, ...shown })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(dispatcher).approvals.approve({ approvalId: approval.id, ...shown })).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/two-person|caused|dispatched/i) });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approval.id } })).toMatchObject({ status: "pending" });
    expect(await db().dispatchAttempt.count({ where: { runId: r.id, status: "queued" } })).toBe(1);
  });

  it("a fork PR never gets to request a privileged capability: the secret is denied at admission, a privileged MCP server refuses the run", async () => {
    const { run, untrusted } = await setup();
    const fork = await run({ isFork: true });
    const result = await claim(fork.id);
    expect(result).toMatchObject({ kind: "started", admission: { secretsGranted: [], pool: { id: untrusted.id } } });
    expect(await approvalsOf(fork.id)).toHaveLength(0);

    const spec = privilegedSpec({ mcpServers: [{ name: "prod-db", transport: "stdio", target: "prod-db-mcp", secrets: [], configMaps: [], privileged: true, required: true }] });
    const other = await setup({ spec });
    const forkMcp = await other.run({ isFork: true });
    expect(await claim(forkMcp.id)).toMatchObject({ kind: "refused", reason: expect.stringMatching(/untrusted code never gets a privileged MCP server: prod-db/) });
    expect(await approvalsOf(forkMcp.id)).toHaveLength(0);
    expect(await db().agentDispatchRun.findUniqueOrThrow({ where: { id: forkMcp.id } })).toMatchObject({ status: "failed" });
  });

  it("a repository admin's narrower exception is a change-gate rule: decided with a proof, only where it applies", async () => {
    const { run, local, dispatcher } = await setup();
    const gate = await getPolicy({ db: db(), kind: "change_gate" });
    const definition = gate.current.definition;
    await savePolicyVersion({
      db: db(),
      actor: { userId: dispatcher.id, label: dispatcher.email },
      kind: "change_gate",
      expectedVersion: gate.version,
      definition: {
        ...definition,
        rules: [
          ...definition.rules,
          {
            name: "privileged_secret_exception",
            priority: 120,
            when: {
              all: [
                { property: "kind", is: "privileged_capability" },
                { property: "repository", is: local.repository.fullName },
                { property: "grants_privileged_secret", is: true },
                { property: "grants_privileged_mcp_server", is: false },
                { property: "grants_open_network", is: false },
              ],
            },
            then: { property: "approval_required", value: false },
            explanation: "This repository's admin lets its repair runs hold their privileged secret without an approval.",
          },
        ],
      },
    });
    const r = await run();
    const started = await claim(r.id);
    expect(started.kind).toBe("started");
    expect(await approvalsOf(r.id)).toHaveLength(0);
    const decision = await db().policyDecision.findFirstOrThrow({ where: { runId: r.id, property: "approval_required" } });
    expect(decision).toMatchObject({ ruleName: "privileged_secret_exception", value: false, subject: expect.stringMatching(/^privileged_capability:attempt:/) });
    expect(decision.proof).toMatchObject({});
    expect(JSON.stringify(decision.proof)).toContain(local.repository.fullName);
    expect(await db().auditEntry.count({ where: { action: "privileged_capability.exempt", detail: { path: ["policyDecisionId"], equals: decision.id } } })).toBe(1);

    // Another repository is not covered by the exception: it still waits.
    const elsewhere = await setup();
    const r2 = await elsewhere.run();
    expect(await claim(r2.id)).toMatchObject({ kind: "awaiting_approval" });
  });
});
