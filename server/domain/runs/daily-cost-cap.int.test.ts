// The repository's daily cost cap against real PostgreSQL: each claim reserves its stack's cost
// cap under the repository's lock, so two attempts claimed at once cannot both pass the cap; a
// run that would pass it is refused at claim with today's (UTC) spend and the cap; the cap is a
// repository admin's setting.
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { callerFor, createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";
import { claimNextAttempt } from "../run-engine/claim-attempt";
import { utcDayStart } from "./daily-cost-cap";

const db = getDb();
const claim = (runId: string) => claimNextAttempt({ db, runId, workerRef: "test/daily-cap", kubernetesAvailable: false });

async function setup(capUsd: number | null, stackCapUsd: number) {
  const user = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "admin"]] });
  await db.repository.update({ where: { id: local.repository.id }, data: { dailyCostCapUsd: capUsd } });
  const pool = await createPool({ concurrency: 5 });
  await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: stackCapUsd, maxRetries: 0 } }));
  const run = () => createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
  return { user, local, run };
}

describe("the daily cost cap", () => {
  it("two attempts claimed at once: only one fits the cap, the other is refused with the figures", async () => {
    const { run } = await setup(5, 3);
    const [a, b] = await Promise.all([run(), run()]);
    const results = await Promise.all([claim(a.id), claim(b.id)]);
    expect(results.map((r) => r.kind).sort()).toEqual(["refused", "started"]);
    const refused = results.find((r) => r.kind === "refused")!;
    expect(refused.kind === "refused" && refused.reason).toMatch(/would be passed: \$0\.00 spent today \(UTC\) and \$3\.00 reserved by running attempts, plus this attempt's \$3\.00 cost cap, is more than the \$5\.00 cap$/);
    const started = results.find((r) => r.kind === "started")!;
    const attempt = await db.dispatchAttempt.findUniqueOrThrow({ where: { id: started.kind === "started" ? started.attempt.id : "" } });
    expect(Number(attempt.costReservedUsd)).toBe(3);
    const refusedRun = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: results[0]!.kind === "refused" ? a.id : b.id }, include: { attempts: true } });
    expect(refusedRun.status).toBe("failed");
    expect(refusedRun.attempts[0]!.exitReason).toContain("refused by the daily cost cap");
  });

  it("many claims at once never reserve more than the cap", async () => {
    const { run } = await setup(10, 3);
    const runs = await Promise.all(Array.from({ length: 6 }, () => run()));
    const results = await Promise.all(runs.map((r) => claim(r.id)));
    expect(results.filter((r) => r.kind === "started")).toHaveLength(3);
    expect(results.filter((r) => r.kind === "refused")).toHaveLength(3);
  });

  it("an ended attempt settles to its real cost; a run that would pass today's spend is refused through the worker", async () => {
    const { run, local } = await setup(1, 0.5);
    const first = await run();
    const claimed = await claim(first.id);
    expect(claimed.kind).toBe("started");
    // It ended having spent $0.70 today (settled: its $0.50 reservation no longer counts).
    await db.dispatchAttempt.update({ where: { id: claimed.kind === "started" ? claimed.attempt.id : "" }, data: { status: "failed", costUsd: "0.70", finishedAt: new Date() } });
    const second = await run();
    const ctx = testWorkerContext({ dataDir: local.dataDir });
    await dispatchRunTask({ runId: second.id }, ctx);
    await drain(ctx);
    const after = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: second.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]!.exitReason).toBe(
      `refused by the daily cost cap: the daily cost cap of ${local.repository.fullName} would be passed: $0.70 spent today (UTC), plus this attempt's $0.50 cost cap, is more than the $1.00 cap`,
    );
    expect(after.attempts[0]!.startedAt).toBeNull();
    // Yesterday's spend does not count today.
    await db.dispatchAttempt.updateMany({ where: { runId: first.id }, data: { costReservedAt: new Date(utcDayStart(new Date()).getTime() - 1000) } });
    const third = await run();
    expect((await claim(third.id)).kind).toBe("started");
  });

  it("a stack with no cost cap cannot reserve: refused while the repository has a daily cap", async () => {
    const user = await createUser();
    const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "admin"]] });
    await db.repository.update({ where: { id: local.repository.id }, data: { dailyCostCapUsd: 5 } });
    const pool = await createPool({ allowUnsandboxed: true });
    await db.runnerPool.deleteMany({ where: { id: { not: pool.id } } });
    const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["true"], env: [], outputFormat: "auto" }, limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries: 0 } }));
    const r = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
    const result = await claim(r.id);
    expect(result.kind === "refused" && result.reason).toContain("this stack sets no cost cap");
  });

  it("is set by repository admins only, bounded, and shown in the settings", async () => {
    const admin = await createUser();
    const maintainer = await createUser();
    const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[admin, "admin"], [maintainer, "maintainer"]] });
    const settings = await callerFor(admin).repositorySettings.get({ repositoryId: local.repository.id });
    expect(settings.policy.dailyCostCapUsd).toBeNull();
    const input = { ...settings.policy, dailyCostCapUsd: 12.5, repositoryId: local.repository.id, expectedVersion: settings.version };
    await expect(callerFor(maintainer).repositorySettings.updatePolicy(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(admin).repositorySettings.updatePolicy({ ...input, dailyCostCapUsd: -1 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(callerFor(admin).repositorySettings.updatePolicy({ ...input, dailyCostCapUsd: 1e9 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await callerFor(admin).repositorySettings.updatePolicy(input);
    const again = await callerFor(admin).repositorySettings.get({ repositoryId: local.repository.id });
    expect(again.policy.dailyCostCapUsd).toBe(12.5);
    await callerFor(admin).repositorySettings.updatePolicy({ ...again.policy, dailyCostCapUsd: null, repositoryId: local.repository.id, expectedVersion: again.version });
    expect((await db.repository.findUniqueOrThrow({ where: { id: local.repository.id } })).dailyCostCapUsd).toBeNull();
  });
});
