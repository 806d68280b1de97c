import { describe, expect, it } from "vitest";
import { getDb, transaction } from "@/server/db";
import { createRepository } from "@/server/testing/factories";
import { deliveryJobKey } from "./config";
import { notify } from "./notify";

const db = () => getDb();
const webhook = { url: "http://127.0.0.1:9/hook", secret: null };

async function jobCount(notificationId: string) {
  const rows = await db().$queryRaw<{ n: number; max: number | null }[]>`
    SELECT count(*)::int AS n, max(max_attempts)::int AS max FROM graphile_worker._private_jobs WHERE key = ${deliveryJobKey(notificationId)}`;
  return { n: rows[0]!.n, maxAttempts: rows[0]!.max };
}

const input = (repositoryId: string, dedupeKey: string) => ({
  kind: "fix_loop_escalated" as const,
  repositoryId,
  title: "PR #7 escalated to a person",
  body: "Three fix runs did not turn the check green.",
  href: "/runs/r1",
  runId: "r1",
  dedupeKey,
});

describe("notify", () => {
  it("20 concurrent calls with one dedupe key make one notification and one delivery job", async () => {
    const repo = await createRepository();
    const results = await Promise.all(Array.from({ length: 20 }, () => notify(db(), input(repo.id, `race:${repo.id}`), { webhook })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await db().notification.count({ where: { repositoryId: repo.id } })).toBe(1);
    const row = await db().notification.findUniqueOrThrow({ where: { id: results[0]!.id } });
    expect(row).toMatchObject({ deliveryStatus: "pending", deliveryAttempts: 0, runId: "r1", pullRequestId: null });
    expect(await jobCount(row.id)).toEqual({ n: 1, maxAttempts: 3 });
  });

  it("a retry after success returns the same notification and queues nothing more", async () => {
    const repo = await createRepository();
    const first = await notify(db(), input(repo.id, `retry:${repo.id}`), { webhook });
    const again = await notify(db(), { ...input(repo.id, `retry:${repo.id}`), title: "changed on retry" }, { webhook });
    expect(again).toEqual({ id: first.id, created: false });
    expect((await db().notification.findUniqueOrThrow({ where: { id: first.id } })).title).toBe("PR #7 escalated to a person");
    expect((await jobCount(first.id)).n).toBe(1);
  });

  it("without a webhook URL it is in-app only: no job, delivery none", async () => {
    const repo = await createRepository();
    const { id } = await notify(db(), input(repo.id, `inapp:${repo.id}`), { webhook: null });
    expect((await db().notification.findUniqueOrThrow({ where: { id } })).deliveryStatus).toBe("none");
    expect((await jobCount(id)).n).toBe(0);
  });

  it("inside a caller's transaction that rolls back, neither the notification nor its job exists", async () => {
    const repo = await createRepository();
    let id = "";
    await expect(
      transaction(db(), "test", async (tx) => {
        id = (await notify(tx, input(repo.id, `rollback:${repo.id}`), { webhook })).id;
        throw new Error("caller failed after notifying");
      }),
    ).rejects.toThrow(/caller failed/);
    expect(id).not.toBe("");
    expect(await db().notification.count({ where: { dedupeKey: `rollback:${repo.id}` } })).toBe(0);
    expect((await jobCount(id)).n).toBe(0);
    // The caller's retry succeeds and makes exactly one.
    const retry = await notify(db(), input(repo.id, `rollback:${repo.id}`), { webhook });
    expect(retry.created).toBe(true);
  });

  it("redacts token shapes from title and body before storing them", async () => {
    const repo = await createRepository();
    const token = `ghp_${"a1".repeat(18)}`;
    const { id } = await notify(db(), { ...input(repo.id, `redact:${repo.id}`), title: `leaked ${token}`, body: `log line: Authorization ${token}` }, { webhook: null });
    const row = await db().notification.findUniqueOrThrow({ where: { id } });
    expect(row.title).not.toContain(token);
    expect(row.body).not.toContain(token);
    expect(row.body).toContain("log line");
    // Over-long text is cut rather than refused, so an escalation never fails on a long PR title.
    const long = await notify(db(), { ...input(repo.id, `long:${repo.id}`), title: "t".repeat(500), body: "b".repeat(30_000) }, { webhook: null });
    const longRow = await db().notification.findUniqueOrThrow({ where: { id: long.id } });
    expect([longRow.title.length, longRow.body.length]).toEqual([200, 20_000]);
  });

  it("refuses an href that is not a console path, and an unknown kind", async () => {
    const repo = await createRepository();
    for (const href of ["https://evil.example/x", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "runs/1"]) {
      await expect(notify(db(), { ...input(repo.id, `href:${href}`), href }, { webhook: null })).rejects.toThrow(/console path/);
    }
    await expect(notify(db(), { ...input(repo.id, "kind"), kind: "nope" as never }, { webhook: null })).rejects.toThrow();
    expect(await db().notification.count({ where: { repositoryId: repo.id } })).toBe(0);
  });
});
