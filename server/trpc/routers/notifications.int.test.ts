import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { notify } from "@/server/domain/notifications/notify";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";

const db = () => getDb();
let seq = 0;
const make = (repositoryId: string, title = `n${++seq}`) =>
  notify(db(), { kind: "write_back_failed", repositoryId, title, body: "The push was refused.", href: "/approvals", dedupeKey: `t:${repositoryId}:${title}` }, { webhook: null });

describe("notifications router", () => {
  it("a viewer of repository A never sees, counts or marks repository B's notifications", async () => {
    const [viewerA, viewerB, admin] = [await createUser(), await createUser(), await createUser({ isAdmin: true })];
    const repoA = await createRepository({ members: [[viewerA, "viewer"]] });
    const repoB = await createRepository({ members: [[viewerB, "viewer"]] });
    const a1 = await make(repoA.id);
    const b1 = await make(repoB.id);
    const b2 = await make(repoB.id);

    const asA = callerFor(viewerA);
    expect((await asA.notifications.list({})).items.map((n) => n.id)).toEqual([a1.id]);
    expect(await asA.notifications.unreadCount()).toBe(1);
    await expect(asA.notifications.list({ repositoryId: repoB.id })).rejects.toMatchObject({ code: "FORBIDDEN" });

    // Marking B's notifications as A does nothing, says nothing about them, and leaves B's count alone.
    expect(await asA.notifications.markRead({ ids: [b1.id, b2.id, "no-such-id"] })).toEqual({ marked: 0 });
    expect(await asA.notifications.markAllRead({})).toEqual({ marked: 1 });
    expect(await db().notificationRead.count({ where: { notificationId: { in: [b1.id, b2.id] } } })).toBe(0);
    expect(await callerFor(viewerB).notifications.unreadCount()).toBe(2);
    expect(await asA.notifications.unreadCount()).toBe(0);

    // A global admin sees every repository's notifications, with its own read state.
    const adminList = await callerFor(admin).notifications.list({ limit: 100 });
    expect(adminList.items.map((n) => n.id)).toEqual(expect.arrayContaining([a1.id, b1.id, b2.id]));
    expect(adminList.items.every((n) => !n.read)).toBe(true);
  });

  it("read state is per person: one maintainer reading leaves the other's count unchanged", async () => {
    const [m1, m2] = [await createUser(), await createUser()];
    const repo = await createRepository({ members: [[m1, "maintainer"], [m2, "viewer"]] });
    const [n1, n2] = [await make(repo.id), await make(repo.id)];
    expect(await callerFor(m1).notifications.markRead({ ids: [n1.id] })).toEqual({ marked: 1 });
    // Marking again (a retried request) changes nothing.
    expect(await callerFor(m1).notifications.markRead({ ids: [n1.id] })).toEqual({ marked: 0 });
    expect(await callerFor(m1).notifications.unreadCount()).toBe(1);
    expect(await callerFor(m2).notifications.unreadCount()).toBe(2);
    const list = await callerFor(m1).notifications.list({});
    expect(list.items.map((n) => [n.id, n.read])).toEqual([
      [n2.id, false],
      [n1.id, true],
    ]);
    expect((await callerFor(m1).notifications.list({ unreadOnly: true })).items.map((n) => n.id)).toEqual([n2.id]);
  });

  it("mark all read stops at the newest notification shown: one that arrives meanwhile stays unread", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    await make(repo.id);
    const shown = await make(repo.id);
    const shownAt = (await db().notification.findUniqueOrThrow({ where: { id: shown.id } })).createdAt;
    const later = await make(repo.id);
    await db().notification.update({ where: { id: later.id }, data: { createdAt: new Date(shownAt.getTime() + 1000) } });
    expect(await callerFor(user).notifications.markAllRead({ upTo: shownAt })).toEqual({ marked: 2 });
    expect((await callerFor(user).notifications.list({ unreadOnly: true })).items.map((n) => n.id)).toEqual([later.id]);
  });

  it("pages newest first by keyset, each notification exactly once", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "viewer"]] });
    const made = [];
    for (let i = 0; i < 7; i++) made.push((await make(repo.id)).id);
    // Ties on createdAt are ordered by id: give three the same instant.
    await db().notification.updateMany({ where: { id: { in: made.slice(2, 5) } }, data: { createdAt: new Date("2026-11-01T00:00:00Z") } });
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await callerFor(user).notifications.list({ repositoryId: repo.id, limit: 2, cursor });
      seen.push(...page.items.map((n) => n.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect([...seen].sort()).toEqual([...made].sort());
    const rows = await db().notification.findMany({ where: { repositoryId: repo.id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it("refuses signed-out callers and malformed input", async () => {
    await expect(callerFor(null).notifications.unreadCount()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const user = await createUser();
    await expect(callerFor(user).notifications.markRead({ ids: [] })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(callerFor(user).notifications.list({ cursor: "not-a-cursor" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
