import { createRun, e2eDb, repositoryOf, workReactions } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// A rejection that arrived while a run was live on its branch waits for that run: the run page's
// fix-loop section says so, and when a maintainer cancels the run in the browser, the rejection
// becomes the loop's next round (a fix intent carrying it verbatim) in the run.ended job the
// cancel enqueued. No worker runs here: the spec works that job itself, and the round stays
// pending; fix-loop.int.test.ts covers the launch and the prompt.

type Db = Awaited<ReturnType<typeof e2eDb>>;
let db: Db;
test.beforeAll(async () => {
  db = await e2eDb();
});
test.afterAll(async () => {
  await db?.end();
});

test("a deferred rejection shows what it waits for, and is taken up when the maintainer cancels that run", async ({ page, baseURL }) => {
  const repositoryId = await repositoryOf(db, demoUser("user_maintainer").email, "maintainer");
  const branch = `e2e/deferred-${Date.now()}`;
  const author = await createRun(db, { repositoryId, title: "Deferral author e2e", status: "succeeded" });
  const live = await createRun(db, { repositoryId, title: "Deferral live e2e", status: "running" });
  await db.query(`UPDATE "AgentDispatchRun" SET "headBranch" = $1 WHERE "id" IN ($2, $3)`, [branch, author, live]);
  const { rows: runRows } = await db.query<{ number: number }>(`SELECT "number" FROM "AgentDispatchRun" WHERE "id" = $1`, [live]);
  const liveNumber = runRows[0]!.number;
  const rejection = "Keep the <b>public</b> API as it is;\nadd a test for negative numbers.";
  const key = `approval:e2e-${Date.now()}`;
  // What onRejection stores (spawn.ts deferRejection) when a maintainer rejects the author's
  // patch while `live` runs on the branch.
  await db.query(
    `INSERT INTO "FixLoopState" ("id", "repositoryId", "branch", "deferredKey", "deferredText", "deferredBy", "deferredRejectedRunId", "deferredAt", "deferredBehindRunId", "updatedAt")
     VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8, now())`,
    [`e2e-state-${Date.now()}`, repositoryId, branch, key, rejection, demoUser("user_maintainer").email, author, live],
  );

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${live}`);
  const loop = page.getByTestId("fix-loop");
  const deferred = loop.getByTestId("fix-loop-deferred");
  await expect(deferred).toBeVisible();
  await expect(deferred).toContainText(`waiting for run #${liveNumber} to end`);
  // The reason is text: its markup is shown, never rendered.
  await expect(deferred.locator("blockquote")).toHaveText(rejection);
  await expect(deferred.locator("b")).toHaveCount(0);
  await expect(loop.getByText("No fix run yet.")).toBeVisible();

  await page.getByRole("button", { name: "Cancel run" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel run" }).click();
  const statusOf = async () => (await db.query<{ status: string }>(`SELECT "status" FROM "AgentDispatchRun" WHERE "id" = $1`, [live])).rows[0]?.status;
  await expect.poll(statusOf, { timeout: 15_000 }).toBe("cancelled");
  // Taking up the deferred rejection is the run.ended reaction: eventually consistent, seen on the next load.
  workReactions();
  await page.reload();
  await expect(deferred).toBeHidden({ timeout: 15_000 });
  const rounds = loop.getByTestId("fix-loop-rounds");
  await expect(rounds.getByText("Round 1")).toBeVisible();
  await expect(rounds.locator("blockquote")).toHaveText(rejection);
  await expect(rounds.getByText("pending")).toBeVisible();
  await expect(loop.getByTestId("fix-loop-attempts")).toHaveText(/^1 of \d+$/);

  const { rows: intents } = await db.query<{ dedupeKey: string; rejection: string; parentRunId: string; outcome: string }>(
    `SELECT "dedupeKey", "rejection", "parentRunId", "outcome" FROM "FixSpawnIntent" WHERE "repositoryId" = $1 AND "branch" = $2`,
    [repositoryId, branch],
  );
  expect(intents).toEqual([{ dedupeKey: `fix:${key}`, rejection, parentRunId: author, outcome: "pending" }]);
  const { rows: state } = await db.query<{ deferredKey: string | null }>(`SELECT "deferredKey" FROM "FixLoopState" WHERE "repositoryId" = $1 AND "branch" = $2`, [repositoryId, branch]);
  expect(state[0]?.deferredKey).toBeNull();
});
