import { describe, expect, it } from "vitest";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";

describe("audit.list", () => {
  it("shows entries of the user's repositories only, newest first, filterable, paged exactly once", async () => {
    const maintainer = await createUser({ email: "m-audit@example.test" });
    const outsider = await createUser();
    const repo = await createRepository({ members: [[maintainer, "maintainer"], [outsider, "viewer"]] });
    const hidden = await createRepository();
    const runs = await Promise.all(Array.from({ length: 7 }, () => createRun({ repositoryId: repo.id, status: "queued" })));
    for (const r of runs) await callerFor(maintainer).runs.cancel({ runId: r.id });
    const hiddenRun = await createRun({ repositoryId: hidden.id, status: "queued" });
    const admin = await createUser({ isAdmin: true });
    await callerFor(admin).runs.cancel({ runId: hiddenRun.id });

    const caller = callerFor(outsider);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await caller.audit.list({ limit: 3, cursor });
      seen.push(...page.items.map((e) => e.objectId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(runs.map((r) => r.id).sort());

    const byActor = await caller.audit.list({ actor: "m-audit" });
    expect(byActor.items).toHaveLength(7);
    expect(byActor.items.every((e) => e.action === "run.cancel")).toBe(true);
    const all = await callerFor(admin).audit.list({ objectId: hiddenRun.id });
    expect(all.items).toHaveLength(1);
  });

  it("names the person, the repository and the object, with a link, instead of ids", async () => {
    const maintainer = await createUser({ email: "named-audit@example.test", name: "Nora Named" });
    const repo = await createRepository({ members: [[maintainer, "maintainer"]] });
    const run = await createRun({ repositoryId: repo.id, status: "queued", title: "Diagnose the named failure" });
    await callerFor(maintainer).runs.cancel({ runId: run.id });
    const [entry] = (await callerFor(maintainer).audit.list({ objectId: run.id })).items;
    expect(entry).toMatchObject({
      actorName: "Nora Named",
      repositoryName: repo.fullName,
      object: { label: `run #${run.number} “Diagnose the named failure”`, href: `/runs/${run.id}` },
    });
  });
});
