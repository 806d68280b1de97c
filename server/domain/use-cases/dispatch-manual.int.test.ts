import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { zContextBundle } from "@/server/domain/context/context-bundle";
import { bareRepoPath, resolveRevision } from "@/server/forges/local/repositories";
import { createLocalRepository, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createUser } from "@/server/testing/factories";
import { dispatchManual } from "./dispatch-manual";

// Manual dispatch (issue 19): a maintainer starts a run by hand on a pull request or branch with
// a task kind, a stack and instructions. It takes the trigger path every event takes, so a fork's
// pull request stays untrusted, and the request id makes a double submit one run.

const db = () => getDb();

async function setup() {
  const maintainer = await createUser();
  const viewer = await createUser();
  const stranger = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[maintainer, "maintainer"], [viewer, "viewer"]] });
  const repositoryId = local.repository.id;
  const stack = await createStack(scriptedSpec({ promptTemplate: "Diagnose {{repository.fullName}} at {{ref.commitSha}}." }));
  const rule = await db().triggerRule.create({ data: { name: `manual-diagnose-${stack.name}`, kind: "manual", repositoryId, stackId: stack.id, taskKind: "diagnose", action: "auto_run" } });
  const pr = (number: number, isFork: boolean) =>
    db().pullRequest.create({
      data: { repositoryId, number, title: `PR ${number}`, author: "someone", headRef: isFork ? "patch-1" : "feature", headSha: local.sha, baseRef: "main", isFork, headRepoFullName: isFork ? "evil/fork" : null },
    });
  return { maintainer, viewer, stranger, local, repositoryId, stack, rule, pr, caller: callerFor(maintainer) };
}

const request = (patch: Record<string, unknown> = {}) => ({ requestId: randomUUID(), target: { kind: "pull_request" as const, number: 7 }, taskKind: "diagnose" as const, ...patch });

describe("runs.dispatchManual", () => {
  it("starts a queued run on a pull request with the rule's stack, the instructions byte for byte in bundle and prompt, audited", async () => {
    const { caller, repositoryId, stack, rule, pr, maintainer, local } = await setup();
    await pr(7, false);
    const instructions = "  Look at the flaky `sum` test first.\n\tThen the lockfile — ünïcode kept.\n";
    const result = await caller.runs.dispatchManual({ repositoryId, ...request({ instructions }) });
    expect(result).toMatchObject({ status: "queued", repeated: false });

    const run = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: result.runId } });
    expect(run).toMatchObject({ source: "manual", taskKind: "diagnose", triggerRuleId: rule.id, stackId: stack.id, headSha: local.sha, isFork: false, actorUserId: maintainer.id });
    const bundle = zContextBundle.parse(run.contextBundle);
    expect(bundle.source).toMatchObject({ kind: "manual", via: "ui" });
    expect(bundle.contextLabels.find((l) => l.name === "instructions")).toEqual({ name: "instructions", fragment: instructions, provenance: { source: "user", ref: maintainer.email } });
    expect(run.prompt).toBe(`Diagnose ${local.repository.fullName} at ${local.sha}.\n\n## Instructions from the person who dispatched this run\n${instructions}\n`);

    const audit = await db().auditEntry.findFirstOrThrow({ where: { action: "run.dispatch_manual", repositoryId } });
    expect(audit).toMatchObject({ actorUserId: maintainer.id });
    expect(audit.detail).toMatchObject({ target: { kind: "pull_request", number: 7 }, taskKind: "diagnose", stack: { id: stack.id }, ruleId: rule.id, instructions });
  });

  it("a double submit (one request id, twice and at once) makes one run and one audit entry; a new request makes another", async () => {
    const { caller, repositoryId, pr } = await setup();
    await pr(7, false);
    const once = request();
    const [a, b] = await Promise.all([caller.runs.dispatchManual({ repositoryId, ...once }), caller.runs.dispatchManual({ repositoryId, ...once })]);
    const again = await caller.runs.dispatchManual({ repositoryId, ...once });
    expect(new Set([a.runId, b.runId, again.runId]).size).toBe(1);
    expect(again.repeated).toBe(true);
    expect(await db().agentDispatchRun.count({ where: { repositoryId } })).toBe(1);
    expect(await db().auditEntry.count({ where: { action: "run.dispatch_manual", repositoryId } })).toBe(1);

    const other = await caller.runs.dispatchManual({ repositoryId, ...request() });
    expect(other.runId).not.toBe(a.runId);
  });

  it("a fork's pull request never gets a trusted run: the run is marked fork, its bundle untrusted", async () => {
    const { caller, repositoryId, pr } = await setup();
    await pr(8, true);
    const result = await caller.runs.dispatchManual({ repositoryId, ...request({ target: { kind: "pull_request", number: 8 } }) });
    const run = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: result.runId } });
    expect(run).toMatchObject({ isFork: true, origin: "fork" });
    const bundle = zContextBundle.parse(run.contextBundle);
    expect(bundle.ref.isFork).toBe(true);
    expect(bundle.policy.secrets).toBe("none");
    expect(bundle.contextLabels[0]?.name).toBe("untrusted-input");
  });

  it("refuses a viewer and a stranger, and writes nothing", async () => {
    const { viewer, stranger, repositoryId, pr } = await setup();
    await pr(7, false);
    await expect(callerFor(viewer).runs.dispatchManual({ repositoryId, ...request() })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(stranger).runs.dispatchManual({ repositoryId, ...request() })).rejects.toMatchObject({ code: expect.stringMatching(/FORBIDDEN|NOT_FOUND/) });
    expect(await db().webhookDelivery.count({ where: { deliveryId: { startsWith: "manual-" }, payload: { path: ["ciEvent", "repository", "fullName"], equals: (await db().repository.findUniqueOrThrow({ where: { id: repositoryId } })).fullName } } })).toBe(0);
    expect(await db().agentDispatchRun.count({ where: { repositoryId } })).toBe(0);
  });

  it("a member demoted after recording is refused at evaluation: their role is read again", async () => {
    const { maintainer, repositoryId, pr } = await setup();
    await pr(7, false);
    await db().membership.update({ where: { userId_repositoryId: { userId: maintainer.id, repositoryId } }, data: { role: "viewer" } });
    // The domain function as a caller that checked the role before the demotion would call it.
    await expect(
      dispatchManual({ db: db(), actor: { userId: maintainer.id, label: maintainer.email }, role: "maintainer", repositoryId, input: request(), localBranchHead: async () => null }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/^No run was started: .*viewer/) });
    expect(await db().agentDispatchRun.count({ where: { repositoryId } })).toBe(0);
  });

  it("bounds: instructions over 10,000 characters, a bad branch name, a bad request id, an unknown PR or branch", async () => {
    const { caller, repositoryId, maintainer, local } = await setup();
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ instructions: "x".repeat(10_001) }) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ target: { kind: "branch", name: "--upload-pack=x" } }) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ target: { kind: "branch", name: "a..b" } }) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ requestId: "not-a-uuid" }) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ target: { kind: "pull_request", number: 99 } }) })).rejects.toMatchObject({ code: "NOT_FOUND" });

    // A branch of the local forge: its head commit; no such branch: refused.
    const heads = (name: string, branch: string) => resolveRevision(bareRepoPath(local.dataDir, name), `refs/heads/${branch}`);
    const actor = { userId: maintainer.id, label: maintainer.email };
    const onMain = await dispatchManual({ db: db(), actor, role: "maintainer", repositoryId, input: request({ target: { kind: "branch", name: "main" } }), localBranchHead: heads });
    expect(await db().agentDispatchRun.findUniqueOrThrow({ where: { id: onMain.runId } })).toMatchObject({ headSha: local.sha, headBranch: "main", isFork: false });
    await expect(
      dispatchManual({ db: db(), actor, role: "maintainer", repositoryId, input: request({ target: { kind: "branch", name: "nope" } }), localBranchHead: heads }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("another stack than the rule's is used when chosen; an unknown one is refused", async () => {
    const { caller, repositoryId, pr } = await setup();
    await pr(7, false);
    const other = await createStack(scriptedSpec({ promptTemplate: "Other {{repository.fullName}}: {{contextLabels}}" }));
    const result = await caller.runs.dispatchManual({ repositoryId, ...request({ stackId: other.id, instructions: "only this" }) });
    const run = await db().agentDispatchRun.findUniqueOrThrow({ where: { id: result.runId } });
    expect(run.stackId).toBe(other.id);
    // The template places the labels itself: the instructions appear once, where it says.
    expect(run.prompt.split("only this")).toHaveLength(2);
    expect(run.prompt).not.toContain("## Instructions from");
    await expect(caller.runs.dispatchManual({ repositoryId, ...request({ stackId: "missing" }) })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
