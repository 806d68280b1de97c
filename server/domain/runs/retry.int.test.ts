import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { failAttemptStart, markAttemptRunning, releaseAttempt } from "./attempts";
import { claimNextAttempt, type ClaimResult } from "../run-engine/claim-attempt";
import { finishAttempt } from "../run-engine/finish-attempt";

// Automatic retries through the real state changes: a timed-out attempt and a transient start
// failure get a new attempt (and a dispatch job) within the stack's bound, like a lost one; an
// agent that failed, or a start that failed for good, ends the run.

type Started = Extract<ClaimResult, { kind: "started" }>;

async function setup(maxRetries: number) {
  const user = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "maintainer"]] });
  const pool = await createPool({ concurrency: 10 });
  await getDb().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const stack = await createStack(scriptedSpec({ limits: { wallClockMinutes: 5, maxCostUsd: 0, maxRetries } }));
  return createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
}

async function start(runId: string, running = true): Promise<Started> {
  const claim = await claimNextAttempt({ db: getDb(), runId, workerRef: "test/retry", kubernetesAvailable: false });
  if (claim.kind !== "started") throw new Error(`claim ${claim.kind}: ${claim.reason}`);
  if (running) await markAttemptRunning({ db: getDb(), fence: claim.fence, sessionId: `s-${claim.attempt.number}` });
  return claim;
}

const end = (claim: Started, status: "timed_out" | "failed", reason: string) =>
  finishAttempt({ db: getDb(), fence: claim.fence, run: claim.run, end: { status, reason }, artifacts: [], approvalTtlMs: 60_000 });

async function state(runId: string) {
  const db = getDb();
  const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, include: { attempts: { orderBy: { number: "asc" } } } });
  const [job] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE "key" = ${`run.dispatch:${runId}`}`;
  const events = await db.runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } });
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return { status: run.status, attempts: run.attempts.map((a) => [a.number, a.status, a.fencingToken]), dispatchJobs: job?.n ?? 0, events };
}

const clearJobs = (runId: string) => getDb().$executeRaw`DELETE FROM graphile_worker._private_jobs WHERE "key" = ${`run.dispatch:${runId}`}`;

describe("automatic retries", () => {
  it("retries a timed-out attempt within the bound, then fails the run", async () => {
    const run = await setup(1);
    const first = await start(run.id);
    expect(await end(first, "timed_out", "wall-clock limit of 300 s reached")).toEqual({ runStatus: "queued", approvalIds: [] });
    let s = await state(run.id);
    expect(s.status).toBe("queued");
    expect(s.attempts).toEqual([[1, "timed_out", 1], [2, "queued", 2]]);
    expect(s.dispatchJobs).toBe(1);
    expect(s.events.some((e) => e.type === "status" && JSON.stringify(e.payload).includes("retry 1 of 1: attempt 1 timed out"))).toBe(true);

    await clearJobs(run.id);
    const second = await start(run.id);
    expect((await end(second, "timed_out", "wall-clock limit of 300 s reached")).runStatus).toBe("failed");
    s = await state(run.id);
    expect(s.status).toBe("failed");
    expect(s.attempts).toEqual([[1, "timed_out", 1], [2, "timed_out", 2]]);
    expect(s.dispatchJobs).toBe(0);
    // The timed-out first attempt's token is refused now.
    await expect(end(first, "failed", "late")).rejects.toMatchObject({ reason: "fenced" });
  });

  it("never retries an agent that failed, whatever the bound", async () => {
    const run = await setup(3);
    const claim = await start(run.id);
    expect((await end(claim, "failed", "`claude` exited with code 1")).runStatus).toBe("failed");
    const s = await state(run.id);
    expect(s.attempts).toEqual([[1, "failed", 1]]);
    expect(s.dispatchJobs).toBe(0);
    expect(JSON.stringify(s.events.at(-1)!.payload)).toMatch(/not retried: the agent itself failed/);
  });

  it("retries a transient start failure, but not a lasting one", async () => {
    const run = await setup(2);
    const first = await start(run.id, false);
    expect(await failAttemptStart({ db: getDb(), fence: first.fence, reason: "the cluster refused the Job: 503", transient: true })).toEqual({ retried: true, nextAttempt: 2 });
    let s = await state(run.id);
    expect(s.status).toBe("queued");
    expect(s.attempts).toEqual([[1, "failed", 1], [2, "queued", 2]]);
    expect(s.dispatchJobs).toBe(1);

    await clearJobs(run.id);
    const second = await start(run.id, false);
    expect(await failAttemptStart({ db: getDb(), fence: second.fence, reason: "could not start `x`: command not found" })).toEqual({ retried: false, runStatus: "failed" });
    s = await state(run.id);
    expect(s.status).toBe("failed");
    expect(s.attempts).toEqual([[1, "failed", 1], [2, "failed", 2]]);
    expect(s.dispatchJobs).toBe(0);
  });

  it("a lost attempt still retries within the bound (shutdown release)", async () => {
    const run = await setup(0);
    const claim = await start(run.id);
    expect(await releaseAttempt({ db: getDb(), fence: claim.fence, reason: "worker shutdown" })).toEqual({ retried: false, runStatus: "failed" });
    expect((await state(run.id)).attempts).toEqual([[1, "lost", 1]]);
  });
});
