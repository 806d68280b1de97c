// Flaky triage end to end with an injected clock: a nightly scan groups the window's failures by
// signature, sends a cluster through the trigger path, and the spec's dedupe key (signature +
// query digest + result-set digest) drops the same failures found the next night; a new failure
// makes a new triage. Also: what is not a cluster and why, the schedule, "Scan now" rights and
// idempotency, and what a viewer of another repository cannot see.
import { beforeAll, describe, expect, it } from "vitest";

const { getDb } = await import("@/server/db");
const { callerFor, createRepository, createUser } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { evaluateAll } = await import("@/server/domain/evaluation/fixtures/harness");
const { dueFlakyScans, pathsOfTests, runFlakyScan } = await import("./flaky-scan");

const db = getDb();
const SIG = "0123456789abcdef";
const OTHER = "fedcba9876543210";
const NIGHT = new Date("2026-11-20T02:00:00Z");
const hours = (h: number) => new Date(NIGHT.getTime() + h * 3_600_000);

let stackId = "";
beforeAll(async () => {
  stackId = (await createStack(db)).id;
});

let n = 0;
/** One CI run of the e2e job at `at`: failed with `signature` (or passed when null). */
async function ciRun(repositoryId: string, at: Date, signature: string | null, o: { failures?: number; job?: string } = {}) {
  const id = `p-${++n}-${Math.random().toString(36).slice(2)}`;
  const failed = signature !== null;
  await db.pipeline.create({
    data: {
      repositoryId, workflowName: "CI", checkName: "CI / e2e", externalId: id, status: "completed", conclusion: failed ? "failure" : "success", headSha: sha(id), headBranch: "main", createdAt: at,
      jobs: {
        create: Array.from({ length: failed ? (o.failures ?? 1) : 1 }, (_, i) => ({
          externalId: `${id}-j${i}`, name: o.job ?? (i === 0 ? "e2e" : `e2e (shard ${i + 1})`), status: "completed" as const, conclusion: failed ? ("failure" as const) : ("success" as const),
          failureSignature: signature, failingTests: failed ? ["e2e/settings.spec.ts > saves the profile"] : [], createdAt: at,
        })),
      },
    },
  });
}

async function flakyRule(repositoryId: string | null, patch: Record<string, unknown> = {}) {
  return createRule(db, { kind: "flaky_scan", stackId, repositoryId, taskKind: "triage", action: "auto_run", ...(patch as Record<string, never>) }).then((r) =>
    db.triggerRule.update({ where: { id: r.id }, data: { scanSchedule: "0 2 * * *", scanWindowHours: 72, scanThreshold: 5, ...patch } }),
  );
}

async function scanAndEvaluate(ruleId: string, at: Date) {
  const result = await runFlakyScan({ db, ruleId, at, requestedBy: "schedule" });
  await evaluateAll(db, result.groups.flatMap((g) => (g.deliveryId ? [g.deliveryId] : [])));
  return result;
}

describe("flaky scan", () => {
  it("10 failures of one signature across 4 runs make one triage run; the same set next night is dropped; a new failure makes a new one", async () => {
    const repo = await createRepository();
    // A 4-day window: every night below still sees the failures of the nights before.
    const rule = await flakyRule(repo.id, { scanWindowHours: 96 });
    // Four failed runs (10 failed jobs: shards) and two passing runs of the job, in the window.
    for (const [h, failures] of [[-45, 3], [-30, 3], [-20, 2], [-5, 2]] as const) await ciRun(repo.id, hours(h), SIG, { failures });
    await ciRun(repo.id, hours(-40), null);
    await ciRun(repo.id, hours(-10), null);

    const first = await scanAndEvaluate(rule.id, NIGHT);
    const cluster = first.groups.find((g) => g.signature === SIG)!;
    expect(cluster).toMatchObject({ cluster: true, occurrences: 10, pipelines: 4, passes: 2, testNames: ["e2e/settings.spec.ts > saves the profile"] });
    let runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id }, orderBy: { createdAt: "asc" } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ source: "flaky_scan", taskKind: "triage", triggerRuleId: rule.id });
    expect(runs[0]!.dedupeKey).toMatch(/^flaky-scan:0123456789abcdef:/);

    // The next night: the same ten failures are still in the window, nothing new.
    const second = await scanAndEvaluate(rule.id, hours(24));
    expect(second.groups.find((g) => g.signature === SIG)).toMatchObject({ cluster: true, resultSetDigest: cluster.resultSetDigest });
    runs = await db.agentDispatchRun.findMany({ where: { repositoryId: repo.id } });
    expect(runs).toHaveLength(1);
    const drop = await db.triggerDrop.findFirstOrThrow({ where: { deliveryId: second.groups.find((g) => g.signature === SIG)!.deliveryId! } });
    expect(drop).toMatchObject({ runId: runs[0]!.id, ruleId: rule.id });

    // A new failure: a new result set, a new triage.
    await ciRun(repo.id, hours(30), SIG);
    await scanAndEvaluate(rule.id, hours(48));
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repo.id } })).toBe(2);
  });

  it("says why a group is not a cluster: under the threshold, one run only, or never passed", async () => {
    const repo = await createRepository();
    const rule = await flakyRule(repo.id, { scanThreshold: 3 });
    await ciRun(repo.id, hours(-3), SIG, { failures: 2 }); // under the threshold
    await ciRun(repo.id, hours(-4), OTHER, { failures: 4 }); // all in one run
    await ciRun(repo.id, hours(-6), "aaaaaaaaaaaaaaaa", { job: "build" });
    await ciRun(repo.id, hours(-7), "aaaaaaaaaaaaaaaa", { job: "build" });
    await ciRun(repo.id, hours(-8), "aaaaaaaaaaaaaaaa", { job: "build" }); // build never passed
    await ciRun(repo.id, hours(-9), null);
    const result = await scanAndEvaluate(rule.id, NIGHT);
    const why = Object.fromEntries(result.groups.map((g) => [g.signature, [g.cluster, g.why]]));
    expect(why[SIG]).toEqual([false, "2 of the 3 failures the rule needs"]);
    expect(why[OTHER]).toEqual([false, "every failure is in one CI run: not repeated across runs"]);
    expect(why.aaaaaaaaaaaaaaaa![0]).toBe(false);
    expect(why.aaaaaaaaaaaaaaaa![1]).toMatch(/^build never passed in the window: broken, not flaky/);
    expect(result.groups.every((g) => g.deliveryId === null)).toBe(true);
    expect(await db.agentDispatchRun.count({ where: { repositoryId: repo.id } })).toBe(0);
  });

  it("reads only its window and the rule's keys, and skips a disabled repository", async () => {
    const repo = await createRepository();
    const rule = await flakyRule(repo.id, { scanThreshold: 2, scanWindowHours: 24, workflow: "CI" });
    await ciRun(repo.id, hours(-30), SIG); // before the window
    await ciRun(repo.id, hours(-2), SIG);
    await ciRun(repo.id, hours(-1), null);
    expect((await runFlakyScan({ db, ruleId: rule.id, at: NIGHT, requestedBy: "schedule" })).groups[0]).toMatchObject({ occurrences: 1, cluster: false });
    await db.repository.update({ where: { id: repo.id }, data: { disabledAt: new Date(), disabledReason: "test" } });
    await ciRun(repo.id, hours(1), SIG);
    expect((await runFlakyScan({ db, ruleId: rule.id, at: hours(2), requestedBy: "schedule" })).groups).toEqual([]);
  });

  it("scans a rule once per minute, however often it is asked", async () => {
    const repo = await createRepository();
    const rule = await flakyRule(repo.id, { scanThreshold: 2 });
    await ciRun(repo.id, hours(-3), SIG);
    await ciRun(repo.id, hours(-2), SIG);
    await ciRun(repo.id, hours(-1), null);
    const at = new Date(NIGHT.getTime() + 17_000); // the same minute
    const results = await Promise.all([NIGHT, at, NIGHT].map((t) => runFlakyScan({ db, ruleId: rule.id, at: t, requestedBy: "schedule" })));
    expect(new Set(results.map((r) => r.scanId)).size).toBe(1);
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(await db.flakyScan.count({ where: { ruleId: rule.id } })).toBe(1);
    // Every caller, the raced ones too, reads the groups with the delivery each cluster was sent as.
    for (const r of results) expect(r.groups.filter((g) => g.cluster).map((g) => g.deliveryId)).toEqual([expect.stringMatching(/^flaky-scan-/)]);
    expect(await db.webhookDelivery.count({ where: { event: "flaky_scan", receivedAt: NIGHT, deliveryId: { in: results[0]!.groups.flatMap((g) => (g.deliveryId ? [g.deliveryId] : [])) } } })).toBe(1);
  });

  it("a retry after a crash between the scan row and its deliveries sends what is missing, once", async () => {
    const repo = await createRepository();
    const rule = await flakyRule(repo.id, { scanThreshold: 2 });
    await ciRun(repo.id, hours(-3), SIG);
    await ciRun(repo.id, hours(-2), SIG);
    await ciRun(repo.id, hours(-1), null);
    const first = await runFlakyScan({ db, ruleId: rule.id, at: NIGHT, requestedBy: "schedule" });
    const deliveryId = first.groups.find((g) => g.cluster)!.deliveryId!;
    // What a crash after the scan row leaves: the scan, no delivery.
    await db.webhookDelivery.deleteMany({ where: { deliveryId } });
    const retried = await runFlakyScan({ db, ruleId: rule.id, at: NIGHT, requestedBy: "schedule" });
    expect(retried).toMatchObject({ scanId: first.scanId, duplicate: true });
    await runFlakyScan({ db, ruleId: rule.id, at: NIGHT, requestedBy: "schedule" });
    expect(await db.webhookDelivery.count({ where: { deliveryId } })).toBe(1);
    expect(await db.flakyScan.count({ where: { ruleId: rule.id } })).toBe(1);
  });

  it("the tick fires exactly the enabled rules whose schedule matches the minute (UTC)", async () => {
    const repo = await createRepository();
    const nightly = await flakyRule(repo.id);
    const hourly = await flakyRule(repo.id, { scanSchedule: "30 * * * *" });
    const off = await flakyRule(repo.id, { enabled: false });
    const manualOnly = await flakyRule(repo.id, { scanSchedule: null });
    const ours = (due: { ruleId: string }[]) => due.map((d) => d.ruleId).filter((id) => [nightly.id, hourly.id, off.id, manualOnly.id].includes(id));
    expect(ours(await dueFlakyScans(db, new Date("2026-11-21T02:00:40Z")))).toEqual([nightly.id]);
    expect(ours(await dueFlakyScans(db, new Date("2026-11-21T05:30:00Z")))).toEqual([hourly.id]);
    expect(ours(await dueFlakyScans(db, new Date("2026-11-21T02:01:00Z")))).toEqual([]);
  });

  it("takes the affected paths from the failing tests' files", () => {
    expect(pathsOfTests(["e2e/a.spec.ts > x", "e2e/a.spec.ts > y", "src/b.test.ts", "not a path > z", "../etc/passwd > p"])).toEqual(["e2e/a.spec.ts", "src/b.test.ts"]);
  });
});

describe("flaky scan rules through the procedures", () => {
  it("a maintainer saves the schedule and scans now (once per minute, audited); a viewer may not; a bad schedule changes nothing", async () => {
    const maintainer = await createUser();
    const viewer = await createUser();
    const repo = await createRepository({ members: [[maintainer, "maintainer"], [viewer, "viewer"]] });
    const base = { name: "nightly flaky", kind: "flaky_scan" as const, repositoryId: repo.id, workflow: null, job: null, step: null, branchGlob: null, pathFilters: [], failureSignature: null, stackId, taskKind: "triage" as const, action: "auto_run" as const, alsoFire: false, enabled: true };
    const m = callerFor(maintainer);

    await expect(m.triggers.create({ ...base, scanSchedule: "0 2 * *", scanWindowHours: 72, scanThreshold: 3 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(m.triggers.create({ ...base, scanSchedule: "0 25 * * *", scanWindowHours: 72, scanThreshold: 3 })).rejects.toMatchObject({ code: "UNPROCESSABLE_CONTENT", message: expect.stringMatching(/Not a schedule the worker can run/) });
    await expect(m.triggers.create({ ...base, scanSchedule: "0 2 * * *", scanWindowHours: 0, scanThreshold: 3 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(m.triggers.create({ ...base, kind: "failed_check", taskKind: "diagnose", scanSchedule: "0 2 * * *", scanWindowHours: 72, scanThreshold: 3 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await db.triggerRule.count({ where: { repositoryId: repo.id } })).toBe(0);

    const rule = await m.triggers.create({ ...base, scanSchedule: "0 2 * * *", scanWindowHours: 72, scanThreshold: 3 });
    expect(rule).toMatchObject({ scanSchedule: "0 2 * * *", scanWindowHours: 72, scanThreshold: 3 });

    await expect(callerFor(viewer).triggers.scanNow({ ruleId: rule.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const [a, b] = await Promise.all([m.triggers.scanNow({ ruleId: rule.id }), m.triggers.scanNow({ ruleId: rule.id })]);
    const jobs = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key = ${`flaky.scan:${rule.id}:${a.at}`}`;
    expect(jobs[0]!.n).toBe(1);
    expect(a.at === b.at || Math.abs(Date.parse(a.at) - Date.parse(b.at)) === 60_000).toBe(true);
    expect(await db.auditEntry.count({ where: { objectId: rule.id, action: "trigger_rule.scan" } })).toBeGreaterThanOrEqual(1);
  });

  it("a global rule's scans show a viewer only the groups of repositories they have a role on", async () => {
    const admin = await createUser({ isAdmin: true });
    const viewer = await createUser();
    const mine = await createRepository({ members: [[viewer, "viewer"]] });
    const theirs = await createRepository();
    const rule = await flakyRule(null, { scanThreshold: 2 });
    for (const repo of [mine, theirs]) {
      await ciRun(repo.id, hours(497), SIG);
      await ciRun(repo.id, hours(498), SIG);
    }
    await runFlakyScan({ db, ruleId: rule.id, at: hours(500), requestedBy: "schedule" });
    const all = await callerFor(admin).triggers.scans({ ruleId: rule.id });
    expect(all[0]!.groups.map((g) => g.repository)).toEqual(expect.arrayContaining([mine.fullName, theirs.fullName]));
    const seen = await callerFor(viewer).triggers.scans({ ruleId: rule.id });
    expect(seen[0]!.groups.map((g) => g.repository)).toEqual([mine.fullName]);
  });
});
