import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { buildContextBundle } from "@/server/domain/context/build-context-bundle";
import { zContextBundle } from "@/server/domain/context/context-bundle";
import { sampleInput } from "@/server/domain/context/fixtures/sample-input";
import { createExecRun, createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createUser } from "@/server/testing/factories";

// "Attempt repair" on a suggested diagnosis: runs.dispatch with taskKind "repair" makes the
// suggestion a repair run with the repository's repair stack (its manual trigger rule for
// repair; the repository's own over one for every repository) and queues it, in one
// transaction. Without a repair stack, or for a viewer, or on a disabled repository, nothing
// changes and the refusal says why.

const db = () => getDb();

async function setup(opts: { isFork?: boolean } = {}) {
  const maintainer = await createUser();
  const viewer = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[maintainer, "maintainer"], [viewer, "viewer"]] });
  const diagnoser = await createStack(scriptedSpec({ promptTemplate: "Diagnose {{repository.fullName}}." }));
  const run = await createExecRun({ repositoryId: local.repository.id, stack: diagnoser, sha: local.sha, status: "suggested", taskKind: "diagnose", isFork: opts.isFork, prompt: "Diagnose acme/web." });
  const bundle = buildContextBundle(sampleInput()).bundle;
  await db().agentDispatchRun.update({ where: { id: run.id }, data: { contextBundle: bundle } });
  return { maintainer, viewer, repositoryId: local.repository.id, diagnoser, run, caller: callerFor(maintainer) };
}

async function repairRule(repositoryId: string | null, promptTemplate: string) {
  const stack = await createStack(scriptedSpec({ promptTemplate }));
  const rule = await db().triggerRule.create({ data: { name: `manual-repair-${stack.name}`, kind: "manual", repositoryId, stackId: stack.id, taskKind: "repair", action: "auto_run" } });
  return { stack, rule };
}

const snapshotOf = (runId: string) =>
  db().agentDispatchRun.findUniqueOrThrow({
    where: { id: runId },
    select: { status: true, taskKind: true, stackId: true, stackDigest: true, prompt: true, promptHash: true, contextDigest: true, _count: { select: { attempts: true, causers: true } } },
  });

describe("Attempt repair (runs.dispatch with taskKind repair)", () => {
  it("without a repair stack the button's reason says so, and dispatching is refused with it, changing nothing", async () => {
    const { run, caller, repositoryId } = await setup();
    const options = await caller.runs.dispatchOptions({ repositoryId });
    expect(options.refusal).toBeNull();
    expect(options.taskStacks.find((t) => t.taskKind === "repair")).toMatchObject({
      stack: null,
      reason: "No repair stack: this repository has no enabled manual trigger rule for repair tasks (add one on Triggers)",
    });
    const before = await snapshotOf(run.id);
    await expect(caller.runs.dispatch({ runId: run.id, taskKind: "repair" })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/^No repair stack/) });
    expect(await snapshotOf(run.id)).toEqual(before);
  });

  it("dispatches the suggestion as a repair with the repository's repair stack over the global one, and queues it once", async () => {
    const { run, caller, maintainer, repositoryId } = await setup();
    await repairRule(null, "Global repair of {{repository.fullName}}.");
    const mine = await repairRule(repositoryId, "Repair {{repository.fullName}} at {{ref.commitSha}}: {{task.outputFormat}}");
    const options = await caller.runs.dispatchOptions({ repositoryId });
    expect(options.taskStacks.find((t) => t.taskKind === "repair")).toMatchObject({ stack: { id: mine.stack.id }, rule: { id: mine.rule.id, scope: "repository" }, reason: null });

    expect(await caller.runs.dispatch({ runId: run.id, taskKind: "repair" })).toEqual({ runId: run.id, status: "queued", attemptNumber: 1, taskKind: "repair" });
    const row = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true, causers: true, events: { orderBy: { seq: "asc" } } } });
    expect(row).toMatchObject({ status: "queued", taskKind: "repair", stackId: mine.stack.id, stackDigest: mine.stack.digest, isFork: false });
    expect(row.prompt).toMatch(/^Repair acme\/web at [0-9a-f]{40}: A Markdown summary of the fix and a unified diff patch/);
    const bundle = zContextBundle.parse(row.contextBundle);
    expect(bundle.task.kind).toBe("repair");
    expect(bundle.stack).toMatchObject({ id: mine.stack.id, digest: mine.stack.digest });
    expect(row.attempts).toMatchObject([{ number: 1, status: "queued" }]);
    expect(row.causers).toMatchObject([{ userId: maintainer.id, cause: "dispatched" }]);
    const status = row.events.filter((e) => e.type === "status").at(-1)?.payload as { reason: string };
    expect(status.reason).toContain(`as a repair run with stack ${mine.stack.name} v1`);
    expect(row.events.some((e) => e.type === "context_assembled" && (e.payload as { digest: string }).digest === row.contextDigest)).toBe(true);
    const audit = await db().auditEntry.findFirstOrThrow({ where: { objectId: run.id, action: "run.dispatch" } });
    expect(audit.detail).toMatchObject({ taskKind: { from: "diagnose", to: "repair" }, stack: { id: mine.stack.id }, ruleId: mine.rule.id });

    // A second click: the run is no longer a suggestion, so nothing is queued twice.
    await expect(caller.runs.dispatch({ runId: run.id, taskKind: "repair" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await db().dispatchAttempt.count({ where: { runId: run.id } })).toBe(1);
  });

  it("a viewer is refused, and a bad task kind never reaches the domain; nothing changes", async () => {
    const { run, viewer, caller, repositoryId } = await setup();
    await repairRule(repositoryId, "Repair {{repository.fullName}}.");
    const before = await snapshotOf(run.id);
    expect((await callerFor(viewer).runs.dispatchOptions({ repositoryId })).refusal).toBe("This needs the maintainer role on the repository; you are viewer");
    await expect(callerFor(viewer).runs.dispatch({ runId: run.id, taskKind: "repair" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    // @ts-expect-error an unknown task kind, as a hostile client would send it
    await expect(caller.runs.dispatch({ runId: run.id, taskKind: "deploy" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await snapshotOf(run.id)).toEqual(before);
  });

  it("a disabled repository dispatches nothing", async () => {
    const { run, caller, repositoryId } = await setup();
    await repairRule(repositoryId, "Repair {{repository.fullName}}.");
    await db().repository.update({ where: { id: repositoryId }, data: { disabledAt: new Date(), disabledReason: "the app was uninstalled" } });
    const before = await snapshotOf(run.id);
    // The dialog says first what dispatching would refuse with: the one sentence of runs/disabled.ts.
    const { refusal } = await caller.runs.dispatchOptions({ repositoryId });
    expect(refusal).toMatch(/^\S+ is disabled \(the app was uninstalled\), so dispatching its runs is refused\. A repository admin can enable it again on its settings page/);
    await expect(caller.runs.dispatch({ runId: run.id, taskKind: "repair" })).rejects.toMatchObject({ code: "CONFLICT", message: refusal });
    expect(await snapshotOf(run.id)).toEqual(before);
  });

  it("a fork PR's suggestion dispatched as a repair stays a fork run (untrusted)", async () => {
    const { run, caller, repositoryId } = await setup({ isFork: true });
    await repairRule(repositoryId, "Repair {{repository.fullName}}.");
    await caller.runs.dispatch({ runId: run.id, taskKind: "repair" });
    expect(await db().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, select: { isFork: true, taskKind: true } })).toEqual({ isFork: true, taskKind: "repair" });
  });
});
