import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { callerFor, createRepository, createRun, createUser } from "@/server/testing/factories";

describe("triage router", () => {
  it("shows a run the triage of its failure (linked to a sibling run of the same pipeline) to its viewers only", async () => {
    const db = getDb();
    const [viewer, stranger] = [await createUser(), await createUser()];
    const repo = await createRepository({ members: [[viewer, "viewer"]] });
    const pipeline = await db.pipeline.create({
      data: { repositoryId: repo.id, workflowName: "CI", checkName: "CI / test", externalId: `p-${repo.id}`, status: "completed", conclusion: "failure", headSha: "a".repeat(40) },
    });
    const [first, sibling] = [await createRun({ repositoryId: repo.id }), await createRun({ repositoryId: repo.id })];
    await db.agentDispatchRun.updateMany({ where: { id: { in: [first.id, sibling.id] } }, data: { pipelineId: pipeline.id } });
    await db.triageDecision.create({
      data: { key: `triage:${pipeline.id}#1`, repositoryId: repo.id, pipelineId: pipeline.id, headSha: pipeline.headSha, disposition: "escalate_to_owner", action: "notify_owner", actionStatus: "done", actionDetail: "escalated to the repository's owners", runId: first.id },
    });

    const seen = await callerFor(viewer).triage.byRun({ runId: sibling.id });
    expect(seen).toMatchObject({ disposition: "escalate_to_owner", action: "notify_owner", checkName: "CI / test" });
    await expect(callerFor(stranger).triage.byRun({ runId: sibling.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerFor(null).triage.byRun({ runId: sibling.id })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(callerFor(viewer).triage.byRun({ runId: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    // A run of another failure has no triage to show.
    expect(await callerFor(viewer).triage.byRun({ runId: (await createRun({ repositoryId: repo.id })).id })).toBeNull();
  });
});
