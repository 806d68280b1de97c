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

  it("an anonymous caller gets UNAUTHORIZED", async () => {
    await expect(callerFor(null).metrics.overview({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
