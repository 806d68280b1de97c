import { describe, expect, it } from "vitest";
import { testDb } from "@/server/testing/db";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";

describe("runs.list keyset pagination", () => {
  it("returns every run exactly once across pages while new runs are inserted", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    // Several runs share a createdAt, so the id tie-breaker is exercised.
    const base = Date.parse("2026-11-01T10:00:00Z");
    const existing = [];
    for (let i = 0; i < 47; i++) {
      existing.push(await createRun({ repositoryId: repo.id, createdAt: new Date(base + Math.floor(i / 3) * 1000) }));
    }
    const caller = callerFor(user);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const page = await caller.runs.list({ repositoryId: repo.id, limit: 10, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
      pages++;
      // Concurrent inserts between pages: newer runs (and one at a tied timestamp).
      await Promise.all([
        createRun({ repositoryId: repo.id }),
        createRun({ repositoryId: repo.id, createdAt: new Date(base + 15_000) }),
      ]);
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(5);
    expect(new Set(seen).size).toBe(seen.length); // no run twice
    for (const run of existing) expect(seen).toContain(run.id); // none lost
  });

  it("filters by status and refuses a forged cursor", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    await createRun({ repositoryId: repo.id, status: "failed" });
    await createRun({ repositoryId: repo.id, status: "succeeded" });
    const caller = callerFor(user);
    const failed = await caller.runs.list({ repositoryId: repo.id, status: "failed" });
    expect(failed.items.map((r) => r.status)).toEqual(["failed"]);
    await expect(caller.runs.list({ cursor: "not-a-cursor" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("counts runs per status", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    await createRun({ repositoryId: repo.id, status: "failed" });
    await createRun({ repositoryId: repo.id, status: "failed" });
    await createRun({ repositoryId: repo.id, status: "running" });
    const counts = await callerFor(user).runs.counts({ repositoryId: repo.id });
    expect(counts).toMatchObject({ failed: 2, running: 1, succeeded: 0 });
  });

  it("filters by source, stack, actor and text in the title or source object, keeping keyset pages", async () => {
    const db = testDb();
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const stack = await db.agentStack.create({ data: { name: `stack-${Date.now()}` } });
    const pr = await db.pullRequest.create({
      data: { repositoryId: repo.id, number: 4242, title: "Fix flaky payment retry", author: "octo", headRef: "fix/retry", headSha: "a".repeat(40), baseRef: "main" },
    });
    const a = await createRun({ repositoryId: repo.id, title: "Diagnose checkout failure" });
    const b = await createRun({ repositoryId: repo.id, title: "Nightly scan" });
    const c = await createRun({ repositoryId: repo.id, title: "Repair build" });
    await db.agentDispatchRun.update({ where: { id: a.id }, data: { source: "pr_comment", actor: "alice", stackId: stack.id, pullRequestId: pr.id } });
    await db.agentDispatchRun.update({ where: { id: b.id }, data: { source: "flaky_scan", actor: "scanner[bot]", headBranch: "release/2.0" } });
    await db.agentDispatchRun.update({ where: { id: c.id }, data: { source: "pr_comment", actor: "bob", stackId: stack.id } });
    const caller = callerFor(user);
    const ids = async (input: Parameters<typeof caller.runs.list>[0]) => (await caller.runs.list({ repositoryId: repo.id, ...input })).items.map((r) => r.id).sort();
    expect(await ids({ source: "pr_comment" })).toEqual([a.id, c.id].sort());
    expect(await ids({ stackId: stack.id, actor: "bob" })).toEqual([c.id]);
    expect(await ids({ q: "checkout" })).toEqual([a.id]);
    expect(await ids({ q: "FLAKY PAYMENT" })).toEqual([a.id]); // the PR's title
    expect(await ids({ q: "#4242" })).toEqual([a.id]); // the PR's number
    expect(await ids({ q: "release/2" })).toEqual([b.id]); // the branch
    expect(await ids({ q: "100%_" })).toEqual([]);
    const page1 = await caller.runs.list({ repositoryId: repo.id, source: "pr_comment", limit: 1 });
    const page2 = await caller.runs.list({ repositoryId: repo.id, source: "pr_comment", limit: 1, cursor: page1.nextCursor });
    expect([...page1.items, ...page2.items].map((r) => r.id).sort()).toEqual([a.id, c.id].sort());
    expect(page2.nextCursor).toBeNull();
    const counts = await caller.runs.counts({ repositoryId: repo.id, source: "pr_comment" });
    expect(counts.queued).toBe(2);
    const options = await caller.runs.filterOptions();
    expect(options.actors).toEqual(expect.arrayContaining(["alice", "bob", "scanner[bot]"]));
    expect(options.stacks.map((s) => s.id)).toContain(stack.id);
  });
});
