import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { zStackSpec } from "@/server/domain/stacks/spec";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";
import { createExecRun, createLocalRepository, createPool, createStack, drain, testWorkerContext } from "@/server/queue/testing/fixtures";
import { createUser } from "@/server/testing/factories";
import { claimNextAttempt } from "../run-engine/claim-attempt";

// A Claude Code stack without its model API key is refused at the claim's admission step, with
// the secret and the server variable to set: the attempt never starts, so nothing can fail later
// as "command not found" or a missing key. A fork PR's run never receives the key.

const db = () => getDb();
const keyVariable = "AIRLOCK_SECRET_TEAM_ANTHROPIC_KEY";

afterEach(() => {
  delete process.env[keyVariable];
});

async function setup(opts: { grant?: boolean; isFork?: boolean } = {}) {
  const user = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "maintainer"]] });
  const pool = await createPool({ networkMode: "restricted", trustTier: opts.isFork ? "untrusted" : "trusted" });
  await db().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const spec = zStackSpec.parse({
    modelProvider: "anthropic",
    model: "claude-sonnet-4-5",
    adapter: { kind: "claude-code", apiKeySecret: "team-anthropic-key", maxTurns: 4 },
    tools: ["Read"],
    promptTemplate: "Fix it",
    limits: { wallClockMinutes: 2, maxCostUsd: 1, maxRetries: 2 },
  });
  const stack = await createStack(spec, `claude-stack-${Math.random().toString(36).slice(2, 8)}`);
  if (opts.grant !== false) await db().secretGrant.create({ data: { secretName: "team-anthropic-key", stackId: stack.id, trustedPoolsOnly: false } });
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id, isFork: opts.isFork });
  return { local, stack, run, pool };
}

/** The run through the worker's dispatch job (the real claim), and what it stored. */
async function dispatch(s: Awaited<ReturnType<typeof setup>>) {
  const ctx = testWorkerContext({ dataDir: s.local.dataDir });
  await dispatchRunTask({ runId: s.run.id }, ctx);
  await drain(ctx);
  const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: s.run.id }, include: { attempts: true } });
  const events = await db().runEvent.findMany({ where: { runId: s.run.id }, orderBy: { seq: "asc" } });
  return { after, events, text: JSON.stringify(events.map((e) => e.payload)) };
}

describe("the model API key of a Claude Code stack, at admission", () => {
  it("a granted key with no value on the server is refused at admission with the variable to set; nothing starts, nothing is retried", async () => {
    const s = await setup();
    const { after, events, text } = await dispatch(s);
    const attempt = after.attempts[0]!;
    expect(after.attempts).toHaveLength(1);
    expect(attempt.status).toBe("failed");
    expect(attempt.startedAt).toBeNull();
    expect(attempt.exitReason).toBe(
      `admission refused: the model API key has no value: set ${keyVariable} on the Airlock server (the secret team-anthropic-key, granted to ${s.stack.name}, is read from it)`,
    );
    expect(after.status).toBe("failed");
    const admission = events.find((e) => e.type === "admission")!.payload as { admitted: boolean; secretsGranted: string[]; secretsDenied: { name: string; reason: string }[] };
    expect(admission.admitted).toBe(false);
    expect(admission.secretsGranted).toEqual([]);
    expect(admission.secretsDenied).toContainEqual({ name: "team-anthropic-key", reason: `granted, but ${keyVariable} is not set on the server` });
    // Never the start-time failures: no process was looked for.
    expect(text).not.toMatch(/command not found|ENOENT|not started: the model API key/);
    expect(events.some((e) => e.type === "status" && (e.payload as { to?: string }).to === "starting")).toBe(false);
  });

  it("a key not granted to the stack is refused at admission, naming the secret to grant and the variable to set", async () => {
    const s = await setup({ grant: false });
    process.env[keyVariable] = "sk-ant-set-but-not-granted";
    const { after, text } = await dispatch(s);
    expect(after.attempts[0]).toMatchObject({ status: "failed", startedAt: null });
    expect(after.attempts[0]!.exitReason).toContain(`admission refused: the model API key is not granted: grant the secret team-anthropic-key to ${s.stack.name}`);
    expect(after.attempts[0]!.exitReason).toContain(`set ${keyVariable} on the Airlock server`);
    expect(text).not.toContain("sk-ant-set-but-not-granted");
  });

  it("a fork PR's run never receives the key, though it is granted and set: refused at admission, saying why", async () => {
    const s = await setup({ isFork: true });
    process.env[keyVariable] = "sk-ant-never-for-forks";
    const claim = await claimNextAttempt({ db: db(), runId: s.run.id, workerRef: "test", kubernetesAvailable: false, sandbox: { available: true, reason: null } });
    expect(claim).toMatchObject({ kind: "refused" });
    expect(claim.kind === "refused" && claim.reason).toContain("a fork PR's run never receives the model API key (secret team-anthropic-key)");
    const after = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: s.run.id }, include: { attempts: true } });
    expect(after.attempts[0]).toMatchObject({ status: "failed", startedAt: null });
    const stored = after.admission as { secretsGranted: string[]; decision: { secretsGranted: { name: string }[]; sandbox: unknown } };
    expect(stored.secretsGranted).not.toContain("team-anthropic-key");
    expect(stored.decision.secretsGranted).toEqual([]);
    const events = await db().runEvent.findMany({ where: { runId: s.run.id } });
    expect(JSON.stringify(events.map((e) => e.payload))).not.toContain("sk-ant-never-for-forks");
  });

  it("the same stack with its key granted and set is admitted, and the key is granted", async () => {
    const s = await setup();
    process.env[keyVariable] = "sk-ant-present";
    const claim = await claimNextAttempt({ db: db(), runId: s.run.id, workerRef: "test", kubernetesAvailable: false, sandbox: { available: true, reason: null } });
    expect(claim.kind).toBe("started");
    expect(claim.kind === "started" && claim.admission.secretsGranted.map((g) => g.name)).toEqual(["team-anthropic-key"]);
  });
});
