import { appendEvents, createRun, e2eDb, message, repositoryOf } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// The model's thinking (Claude's thinking blocks, parsed from stream-json) is shown collapsed to
// one clipped line, never as the answer, and expands on a click.

type Db = Awaited<ReturnType<typeof e2eDb>>;
let db: Db;
test.beforeAll(async () => {
  db = await e2eDb();
});
test.afterAll(async () => {
  await db?.end();
});

test("thinking is collapsed to one line and expands on a click", async ({ page, baseURL }) => {
  const repositoryId = await repositoryOf(db, demoUser("user_maintainer").email, "maintainer");
  const runId = await createRun(db, { repositoryId, title: "Thinking e2e" });
  const tail = "so the fix is to add b instead of subtracting it";
  const thinking = `The test expects sum(1, 2) to be 3. ${"Reading sum.js line by line before changing anything. ".repeat(4)}${tail}.`;
  await appendEvents(db, runId, [{ type: "thinking", payload: { text: thinking } }, message("sum.js subtracts; it should add.")]);

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  const toggle = page.getByRole("button", { name: "Thinking, collapsed" });
  await expect(toggle).toBeVisible();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(toggle).toContainText("The test expects sum(1, 2) to be 3.");
  // Collapsed: clipped, so the end of the reasoning is not on the page.
  await expect(page.getByText(tail)).toHaveCount(0);
  await expect(page.getByText("sum.js subtracts; it should add.")).toBeVisible();

  await toggle.click();
  const expanded = page.getByRole("button", { name: "Thinking, expanded" });
  await expect(expanded).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByText(tail, { exact: false })).toBeVisible();

  await expanded.click();
  await expect(page.getByRole("button", { name: "Thinking, collapsed" })).toBeVisible();
  await expect(page.getByText(tail)).toHaveCount(0);
});
