import { loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// What `npm start` promises a newcomer, with a real worker: the demo repository's check fails in
// the local CI, the trigger path turns the failure into a run, the scripted agent streams its
// transcript and leaves a patch, and the run waits for a person's approval.

type Db = Awaited<ReturnType<typeof loopDb>>;
let db: Db;
test.beforeAll(async () => {
  db = await loopDb();
});
test.afterAll(async () => {
  await db?.end();
});

test("the demo's failing check becomes a run whose patch awaits approval", async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  let runId: string | undefined;
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ id: string; status: string }>(
          `SELECT r."id", r."status" FROM "AgentDispatchRun" r JOIN "Repository" repo ON repo."id" = r."repositoryId"
            JOIN "Pipeline" p ON p."id" = r."pipelineId"
            -- the local CI's own pipelines (local-ci-<n>-<time>), not the seeded history (local-ci-41)
            WHERE repo."fullName" = 'demo/calculator' AND p."externalId" ~ '^local-ci-[0-9]+-[0-9a-z]+$'
              AND p."conclusion" = 'failure' AND r."status" = 'awaiting_approval'
            ORDER BY r."createdAt" LIMIT 1`,
        );
        runId = rows[0]?.id;
        return rows[0]?.status ?? "none";
      },
      { timeout: 150_000, intervals: [1_000] },
    )
    .toBe("awaiting_approval");

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  await expect(page.getByText("Awaiting approval").first()).toBeVisible();
  // The patch the scripted agent produced is listed with its digest.
  await expect(page.getByText(/sha256:[0-9a-f]{12}/).first()).toBeVisible();
});
