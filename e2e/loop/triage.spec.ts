import { loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// Triage in the loop, with a real worker: the demo repository's check fails in the local CI, the
// CI-triage policy decides "fix forward" from the stored pipelines, the trigger rule's run is
// dispatched, and its run view shows that decision with its proof tree beside the runner
// selection decision the worker made when it admitted the attempt.

type Db = Awaited<ReturnType<typeof loopDb>>;
let db: Db;
test.beforeAll(async ({}, info) => {
  db = await loopDb(info.project.name);
});
test.afterAll(async () => {
  await db?.end();
});

test("the demo's failed check is triaged as fix forward and its run shows the decision's proof", async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  // The failure's triage, and the run the trigger rules dispatched for it once it was admitted.
  let found: { runId: string; triageRunId: string | null } | undefined;
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ runId: string; triageRunId: string | null; disposition: string }>(
          `SELECT r."id" AS "runId", t."runId" AS "triageRunId", t."disposition"
             FROM "TriageDecision" t JOIN "Repository" repo ON repo."id" = t."repositoryId"
             JOIN "AgentDispatchRun" r ON r."pipelineId" = t."pipelineId"
            WHERE repo."fullName" = 'demo/calculator' AND r."status" = 'awaiting_approval'
            ORDER BY t."createdAt" LIMIT 1`,
        );
        found = rows[0];
        return rows[0]?.disposition ?? "none";
      },
      { timeout: 150_000, intervals: [1_000] },
    )
    .toBe("fix_forward");
  // Exactly one triage decision for the failure, linked to one of its runs.
  const { rows: counts } = await db.query<{ n: number; linked: number }>(
    `SELECT count(*)::int AS n, count(t."runId")::int AS linked FROM "TriageDecision" t
       JOIN "AgentDispatchRun" r ON r."pipelineId" = t."pipelineId" WHERE r."id" = $1`,
    [found!.runId],
  );
  expect(counts[0]).toEqual({ n: 1, linked: 1 });

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${found!.runId}`);
  const section = page.getByRole("region", { name: "Policy decisions" });
  await expect(section.getByTestId("run-triage")).toContainText("fix forward");
  const proof = section.getByTestId("decision-ci_triage").getByTestId("proof-tree");
  await expect(proof).toContainText("disposition = fix_forward");
  await expect(proof).toContainText("via deterministic_failure_fixes_forward");
  await expect(proof).toContainText("failing_stage");
  // The runner selection the worker made when it admitted the attempt, with its own proof.
  const selection = section.getByTestId("decision-runner_selection").first();
  await expect(selection).toBeVisible();
  await selection.locator(":scope > summary").click();
  await expect(selection.getByTestId("proof-tree")).toBeVisible();
});
