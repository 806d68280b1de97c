import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";
import { metricsSnapshot } from "./metrics";

describe("metrics", () => {
  it("computes wait, duration and counts from the records, scoped to the user's repositories", async () => {
    const db = getDb();
    const user = await createUser();
    const mine = await createRepository({ members: [[user, "viewer"]] });
    const other = await createRepository();
    const t0 = new Date(Date.now() - 3600_000);
    const run = await createRun({ repositoryId: mine.id, status: "succeeded" });
    await db.agentDispatchRun.update({ where: { id: run.id }, data: { startedAt: t0, finishedAt: new Date(t0.getTime() + 90_000), costUsd: 0.42 } });
    await db.dispatchAttempt.create({
      data: { runId: run.id, number: 1, status: "succeeded", fencingToken: 1, queuedAt: t0, startedAt: new Date(t0.getTime() + 2000) },
    });
    await createRun({ repositoryId: mine.id, status: "queued" });
    await createRun({ repositoryId: other.id, status: "failed" });

    const m = await callerFor(user).metrics.overview({});
    expect(m.runsByStatus).toMatchObject({ succeeded: 1, queued: 1, failed: 0 });
    expect(m.dispatchWaitSeconds).toMatchObject({ count: 1, p50: 2 });
    expect(m.runDurationSeconds).toMatchObject({ count: 1, p50: 90 });
    expect(m.costUsd).toBeCloseTo(0.42);

    const all = await metricsSnapshot({ db, repositoryIds: "all" });
    expect(all.runsByStatus.failed).toBeGreaterThanOrEqual(1);
  });

  it("draws the figures over time: zero-filled hourly points, scoped to the user's repositories", async () => {
    const db = getDb();
    const user = await createUser();
    const mine = await createRepository({ members: [[user, "viewer"]] });
    const other = await createRepository();
    const now = new Date();
    const twoHoursAgo = new Date(now.getTime() - 2 * 3600_000);
    const failed = await createRun({ repositoryId: mine.id, status: "failed", createdAt: twoHoursAgo });
    await db.agentDispatchRun.update({ where: { id: failed.id }, data: { costUsd: 0.25 } });
    await createRun({ repositoryId: mine.id, status: "queued", createdAt: now });
    await createRun({ repositoryId: other.id, status: "failed", createdAt: now });

    const { bucket, points } = await callerFor(user).metrics.series({ windowHours: 24 });
    expect(bucket).toBe("hour");
    expect(points.length).toBeGreaterThanOrEqual(24);
    expect(points.reduce((n, p) => n + p.runsCreated, 0)).toBe(2);
    expect(points.reduce((n, p) => n + p.runsFailed, 0)).toBe(1);
    const hourOfFailure = points.find((p) => p.runsFailed === 1)!;
    expect(new Date(hourOfFailure.at).getTime()).toBeLessThanOrEqual(twoHoursAgo.getTime());
    expect(hourOfFailure.costUsd).toBeCloseTo(0.25);
    expect(points.filter((p) => p.runsCreated === 0).length).toBeGreaterThan(20);
    expect((await callerFor(user).metrics.series({ windowHours: 24 * 7 })).bucket).toBe("day");
  });

  it("an anonymous caller gets UNAUTHORIZED", async () => {
    await expect(callerFor(null).metrics.overview({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
