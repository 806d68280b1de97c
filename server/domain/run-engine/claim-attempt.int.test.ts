import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { createUser } from "@/server/testing/factories";
import { createExecRun, createLocalRepository, createPool, createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { claimNextAttempt, readRunForExecution, runForExecution } from "./claim-attempt";

// The claim under races and cut-offs: admission's policy decisions are stored (with their
// proofs) in the claim's own transaction, exactly once per attempt, and never for a claim that
// did not commit; two claimers never start the same attempt or overfill a pool.

async function setup(opts: { concurrency?: number } = {}) {
  const user = await createUser();
  const local = await createLocalRepository({ files: { "README.md": "x\n" }, members: [[user, "maintainer"]] });
  const pool = await createPool({ concurrency: opts.concurrency ?? 4 });
  // Tests in this file share a database: only this test's pool is eligible.
  await getDb().runnerPool.deleteMany({ where: { id: { not: pool.id } } });
  const stack = await createStack(scriptedSpec());
  const run = () => createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: user.id });
  return { user, local, pool, stack, run };
}

const claim = (runId: string, now?: () => Date) => claimNextAttempt({ db: getDb(), runId, workerRef: "test/claim", kubernetesAvailable: false, now });
const decisionsOf = (runId: string) => getDb().policyDecision.findMany({ where: { runId }, orderBy: { property: "asc" } });

describe("claimNextAttempt", () => {
  it("reads the run in one query exactly as Prisma's select would, with and without a pull request", async () => {
    const { local, run } = await setup();
    const db = getDb();
    const plain = await run();
    const pr = await db.pullRequest.create({
      data: { repositoryId: local.repository.id, number: 7, title: "t", author: "a", headRef: "feature/x", headSha: local.sha, baseRef: "main" },
    });
    const withPr = await db.agentDispatchRun.update({ where: { id: (await run()).id }, data: { pullRequestId: pr.id, admission: { note: "kept" } } });
    await db.repository.update({ where: { id: local.repository.id }, data: { writeBackExceptions: ["comment"], botCommentsAllowed: true } });
    for (const id of [plain.id, withPr.id]) {
      expect(await readRunForExecution(db, id)).toEqual(await db.agentDispatchRun.findUnique({ where: { id }, select: runForExecution }));
    }
    expect(await readRunForExecution(db, "no-such-run")).toBeNull();
  });

  it("a queued run of a repository disabled since it was queued is refused at the claim with the reason, and starts nothing", async () => {
    const { local, run } = await setup();
    const r = await run();
    await getDb().repository.update({ where: { id: local.repository.id }, data: { disabledAt: new Date(), disabledReason: "archived upstream", disabledBy: "admin" } });
    const result = await claim(r.id);
    expect(result).toMatchObject({ kind: "refused", reason: expect.stringContaining("is disabled (by an admin: archived upstream), so starting its runs is refused") });
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts).toMatchObject([{ status: "failed", runnerPoolId: null }]);
    expect(await decisionsOf(r.id)).toEqual([]);
    // A second claim (a retried job) changes nothing.
    expect((await claim(r.id)).kind).not.toBe("started");
  });

  it("stores both runner_selection decisions with their proofs, for the attempt, before it starts", async () => {
    const { pool, run } = await setup();
    const r = await run();
    const result = await claim(r.id);
    expect(result.kind).toBe("started");
    if (result.kind !== "started") return;
    const decisions = await decisionsOf(r.id);
    expect(decisions.map((d) => [d.property, d.subject])).toEqual([
      ["pool_trust_tier", `attempt:${result.attempt.id}`],
      ["privileged_credentials", `attempt:${result.attempt.id}`],
    ]);
    expect(decisions.every((d) => d.proof !== null && d.ruleName !== null)).toBe(true);
    expect(decisions.find((d) => d.property === "pool_trust_tier")!.value).toBe("trusted");
    // The admission on the run and in the claim names exactly those rows.
    expect([...result.admission.decisionIds].sort()).toEqual(decisions.map((d) => d.id).sort());
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id }, include: { attempts: true } });
    expect(after.admission).toMatchObject({ attemptId: result.attempt.id, poolName: pool.name, policyDecisionId: result.admission.decisionIds[0] });
    expect(after.attempts).toMatchObject([{ status: "starting", runnerPoolId: pool.id, fencingToken: 1, number: 1 }]);
  });

  it("racing claimers of one run start it once and store its decisions once", async () => {
    const { run } = await setup();
    const r = await run();
    const results = await Promise.all(Array.from({ length: 5 }, () => claim(r.id)));
    expect(results.filter((x) => x.kind === "started")).toHaveLength(1);
    expect(results.filter((x) => x.kind === "skipped")).toHaveLength(4);
    const attempts = await getDb().dispatchAttempt.findMany({ where: { runId: r.id } });
    expect(attempts.map((a) => a.status)).toEqual(["starting"]);
    expect(await decisionsOf(r.id)).toHaveLength(2);
    const seqs = (await getDb().runEvent.findMany({ where: { runId: r.id }, orderBy: { seq: "asc" } })).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("racing claims on a full pool start only its concurrency; a waiting attempt keeps its stored decisions", async () => {
    const { run } = await setup({ concurrency: 1 });
    const runs = await Promise.all(Array.from({ length: 4 }, () => run()));
    const results = await Promise.all(runs.map((r) => claim(r.id)));
    expect(results.filter((x) => x.kind === "started")).toHaveLength(1);
    expect(results.filter((x) => x.kind === "waiting")).toHaveLength(3);
    for (const r of runs) expect(await decisionsOf(r.id)).toHaveLength(2);

    // Free the slot: a waiting run starts on its stored admission, deciding nothing again.
    const started = results.findIndex((x) => x.kind === "started");
    await getDb().dispatchAttempt.updateMany({ where: { runId: runs[started]!.id }, data: { status: "succeeded", finishedAt: new Date() } });
    const waiting = runs.find((_, i) => i !== started)!;
    const before = await decisionsOf(waiting.id);
    const again = await claim(waiting.id);
    expect(again.kind).toBe("started");
    if (again.kind === "started") expect([...again.admission.decisionIds].sort()).toEqual(before.map((d) => d.id).sort());
    expect(await decisionsOf(waiting.id)).toEqual(before);
  });

  it("a claim cut off inside its transaction leaves no decision, no attempt and no event; the next claim succeeds", async () => {
    const { run } = await setup();
    const r = await run();
    // The clock is read when the attempt is queued, then when the admission is stored (after the
    // decisions were written): fail there, as a crash or a dropped connection would.
    let calls = 0;
    const failing = () => {
      if (++calls === 2) throw new Error("connection lost");
      return new Date();
    };
    await expect(claim(r.id, failing)).rejects.toThrow(/connection lost/);
    expect(await decisionsOf(r.id)).toHaveLength(0);
    expect(await getDb().dispatchAttempt.count({ where: { runId: r.id } })).toBe(0);
    expect(await getDb().runEvent.count({ where: { runId: r.id } })).toBe(0);
    expect((await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: r.id } })).admission).toBeNull();

    const ok = await claim(r.id);
    expect(ok.kind).toBe("started");
    expect(await decisionsOf(r.id)).toHaveLength(2);
  });
});
