import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { buildContextBundle } from "@/server/domain/context/build-context-bundle";
import { sampleInput } from "@/server/domain/context/fixtures/sample-input";
import { loadCurrentPolicy } from "@/server/domain/policy/decide";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createUser } from "@/server/testing/factories";
import { loadAdmissionInputs, planAdmission } from "./admit-attempt";
import { readRunForExecution } from "../run-engine/claim-attempt";

// runs.fork as the Fork dialog sends it: the prompt comes back prefilled (unchanged unless the
// person edited it), the stack select sends nothing or another stack. A fork never changes
// where the code comes from, so a fork PR's run stays on untrusted pools on any stack.

const db = () => getDb();

async function setup(opts: { isFork?: boolean } = {}) {
  const maintainer = await createUser();
  const viewer = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[maintainer, "maintainer"], [viewer, "viewer"]] });
  const stack = await createStack(scriptedSpec());
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: maintainer.id, isFork: opts.isFork, prompt: "Fix the failing check." });
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { status: "failed", finishedAt: new Date() } });
  return { maintainer, viewer, local, stack, run, caller: callerFor(maintainer) };
}

const runCount = () => db().agentDispatchRun.count();

describe("runs.fork (the Fork dialog)", () => {
  it("an edited prompt makes a queued child run with that prompt, the parent's stack, and the forker as causer", async () => {
    const { run, caller, maintainer } = await setup();
    const child = await caller.runs.fork({ runId: run.id, prompt: "Only diagnose; do not patch." });
    const row = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: child.runId }, include: { attempts: true, causers: true } });
    expect(row).toMatchObject({ source: "fork", parentRunId: run.id, prompt: "Only diagnose; do not patch.", stackId: run.stackId, stackDigest: run.stackDigest, status: "queued", actorUserId: maintainer.id });
    expect(row.attempts).toMatchObject([{ number: 1, status: "queued" }]);
    expect(row.causers.map((c) => c.cause).sort()).toEqual(["forked", "started"]);
  });

  it("the prompt sent back unchanged with no other stack is refused and makes nothing; so is the run's own stack", async () => {
    const { run, caller } = await setup();
    const before = await runCount();
    await expect(caller.runs.fork({ runId: run.id, prompt: run.prompt })).rejects.toMatchObject({ code: "BAD_REQUEST", message: "A fork needs an edited prompt or another stack." });
    await expect(caller.runs.fork({ runId: run.id, prompt: run.prompt, stackId: run.stackId! })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.fork({ runId: run.id })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await runCount()).toBe(before);
  });

  it("another stack with the prompt unchanged renders that stack's template; a stack that does not exist is refused", async () => {
    const { run, caller } = await setup();
    const other = await createStack(scriptedSpec({ model: "other-model", promptTemplate: "Other stack on {{repository.fullName}}." }));
    await db().agentDispatchRun.update({
      where: { id: run.id },
      data: { contextBundle: sampleBundle() },
    });
    const child = await caller.runs.fork({ runId: run.id, prompt: run.prompt, stackId: other.id });
    const row = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: child.runId } });
    expect(row).toMatchObject({ stackId: other.id, stackDigest: other.digest });
    expect(row.prompt).toBe("Other stack on acme/web.");
    const before = await runCount();
    await expect(caller.runs.fork({ runId: run.id, stackId: "no-such-stack" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await runCount()).toBe(before);
  });

  it("a viewer is refused and nothing is made; bounds are enforced before the domain", async () => {
    const { run, viewer, caller } = await setup();
    const before = await runCount();
    await expect(callerFor(viewer).runs.fork({ runId: run.id, prompt: "Edited." })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(caller.runs.fork({ runId: run.id, prompt: "x".repeat(100_001) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.fork({ runId: run.id, stackId: "s".repeat(101) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await runCount()).toBe(before);
  });

  it("a fork PR's run forked onto another stack is still a fork run and is admitted only to an untrusted pool", async () => {
    const { run, caller } = await setup({ isFork: true });
    const trusted = await createPool({ trustTier: "trusted" });
    await createPool({ trustTier: "untrusted" });
    const other = await createStack(scriptedSpec({ model: "other-model" }));
    const child = await caller.runs.fork({ runId: run.id, prompt: "Edited: try harder.", stackId: other.id });
    const row = await readRunForExecution(db(), child.runId);
    expect(row).toMatchObject({ isFork: true, stackId: other.id });
    const plan = planAdmission({
      inputs: await loadAdmissionInputs(db(), row!),
      policy: await loadCurrentPolicy(db(), "runner_selection"),
      kubernetesAvailable: false,
      sandbox: { available: true, reason: null },
    });
    expect(plan.decision.trustTier).toBe("untrusted");
    expect(plan.decision.pool?.trustTier).toBe("untrusted");
    expect(plan.decision.pool?.id).not.toBe(trusted.id);
    expect(plan.decision.poolsSkipped.map((p) => p.name)).toContain(trusted.name);
  });
});

/** A real context bundle (the context area's sample input), stored as the parent's. */
const sampleBundle = () => buildContextBundle(sampleInput()).bundle;
