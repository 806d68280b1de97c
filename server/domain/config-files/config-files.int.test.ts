import { describe, expect, it } from "vitest";
import { createStack, scriptedSpec } from "@/server/queue/testing/fixtures";
import { callerFor, createRepository, createUser } from "@/server/testing/factories";
import { getDb } from "@/server/db";

// Trigger rules as files through the routers: plan, apply, and a second apply that saves nothing.

describe("triggers export|apply", () => {
  it("creates, then plans unchanged, then updates only what the file changed; refuses another repository's rule", async () => {
    const user = await createUser();
    const repo = await createRepository({ members: [[user, "maintainer"]] });
    const other = await createRepository();
    const stack = await createStack(scriptedSpec());
    const caller = callerFor(user);
    const rule = { name: "diagnose red checks", repository: repo.fullName, stack: stack.name, kind: "failed_check", workflow: "ci", taskKind: "diagnose", action: "suggest", enabled: true } as const;

    const planned = await caller.configFiles.applyTriggers({ document: { triggers: [rule] } });
    expect(planned.entries.map((e) => e.action)).toEqual(["create"]);
    expect(await getDb().triggerRule.count({ where: { repositoryId: repo.id } })).toBe(0);

    await caller.configFiles.applyTriggers({ document: { triggers: [rule] }, dryRun: false });
    const again = await caller.configFiles.applyTriggers({ document: { triggers: [rule] }, dryRun: false });
    expect(again.entries).toEqual([expect.objectContaining({ action: "unchanged", version: 1 })]);

    const exported = await caller.configFiles.exportTriggers();
    const mine = exported.triggers.filter((t) => t.repository === repo.fullName);
    expect((await caller.configFiles.applyTriggers({ document: { triggers: mine } })).entries.map((e) => e.action)).toEqual(["unchanged"]);

    const changed = await caller.configFiles.applyTriggers({ document: { triggers: [{ ...rule, workflow: "release" }] }, dryRun: false });
    expect(changed.entries[0]).toMatchObject({ action: "update", version: 2, changes: [{ path: "workflow", before: "ci", after: "release" }] });

    await expect(caller.configFiles.applyTriggers({ document: { triggers: [{ ...rule, repository: other.fullName }] }, dryRun: false })).rejects.toThrow(/no repository/);
  });
});
