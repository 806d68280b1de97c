import { describe, expect, it } from "vitest";
import { getAuth } from "@/server/auth";
import { callerFor, createRepository, createRun, createUser, TEST_PASSWORD } from "@/server/testing/factories";

describe("auth", () => {
  it("signs in with the right password and creates a session row", async () => {
    const user = await createUser({ email: "sign-in@example.test" });
    const res = await getAuth().api.signInEmail({ body: { email: user.email, password: TEST_PASSWORD } });
    expect(res.user.id).toBe(user.id);
    expect(res.token).toMatch(/.{16,}/);
  });

  it("refuses a wrong password with a clear message", async () => {
    const user = await createUser();
    await expect(getAuth().api.signInEmail({ body: { email: user.email, password: "wrong-password" } })).rejects.toThrow(
      /invalid email or password/i,
    );
  });

  it("stores a hash, never the password", async () => {
    const user = await createUser();
    const { getDb } = await import("@/server/db");
    const account = await getDb().account.findFirstOrThrow({ where: { userId: user.id, providerId: "credential" } });
    expect(account.password).toBeTruthy();
    expect(account.password).not.toContain(TEST_PASSWORD);
  });
});

describe("procedure permissions", () => {
  it("an anonymous call gets UNAUTHORIZED", async () => {
    await expect(callerFor(null).runs.list({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("a viewer can read a run but a non-member gets FORBIDDEN", async () => {
    const viewer = await createUser();
    const stranger = await createUser();
    const repo = await createRepository({ members: [[viewer, "viewer"]] });
    const run = await createRun({ repositoryId: repo.id });
    await expect(callerFor(viewer).runs.byId({ runId: run.id })).resolves.toMatchObject({ id: run.id, viewerRole: "viewer" });
    await expect(callerFor(stranger).runs.byId({ runId: run.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("a viewer filtering by a repository they are not a member of gets FORBIDDEN", async () => {
    const viewer = await createUser();
    const repo = await createRepository();
    await expect(callerFor(viewer).runs.list({ repositoryId: repo.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("the list shows only runs of the user's repositories; a global admin sees all", async () => {
    const member = await createUser();
    const admin = await createUser({ isAdmin: true });
    const mine = await createRepository({ members: [[member, "viewer"]] });
    const other = await createRepository();
    const a = await createRun({ repositoryId: mine.id });
    const b = await createRun({ repositoryId: other.id });
    const seen = (await callerFor(member).runs.list({ limit: 100 })).items.map((r) => r.id);
    expect(seen).toContain(a.id);
    expect(seen).not.toContain(b.id);
    const all = (await callerFor(admin).runs.list({ limit: 100 })).items.map((r) => r.id);
    expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it("bad input is refused with field errors", async () => {
    const user = await createUser();
    await expect(callerFor(user).runs.list({ limit: 1000 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
