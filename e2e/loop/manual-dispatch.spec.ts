import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { loopDataDir, loopDb } from "../db";
import { demoUser, expect, signIn, test } from "../fixtures";

// Manual dispatch by clicks (issue 19): a maintainer opens "Dispatch a run" on /runs, picks the
// demo repository's main branch, the diagnose task (the seeded manual rule) and types
// instructions; the dialog shows the block the prompt gets, the run opens, and its stored prompt
// ends with exactly that block. A viewer gets no button, and the procedure refuses them.
// Under e2e/loop/ so it has its own server and database: the run it makes changes no other
// spec's starting state.

const REPOSITORY = "demo/calculator";
const HEADING = "## Instructions from the person who dispatched this run";
// Leading spaces, a tab, a blank line and non-ASCII: kept byte for byte.
const INSTRUCTIONS = "  Check the rounding in `sum` first.\n\n\tThen the lockfile — ünïcode stays.";

const bareRepo = () => resolve(loopDataDir(test.info().project.name), "forge", "demo", "calculator.git");
const mainHead = () => {
  try {
    return execFileSync("git", ["--git-dir", bareRepo(), "rev-parse", "--verify", "--quiet", "refs/heads/main"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
};

test.describe("manual dispatch", () => {
  test.setTimeout(180_000);

  test("a maintainer dispatches a diagnosis on main with instructions; the run's prompt carries them byte for byte", async ({ page, baseURL }) => {
    // The demo bootstrap pushes the repository after the server starts.
    await expect.poll(mainHead, { timeout: 120_000, intervals: [1_000] }).not.toBe("");
    const head = mainHead();
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/runs");
    const dialog = page.getByRole("dialog", { name: "Dispatch a run" });
    // A click that lands before the page hydrates opens nothing: click until the dialog opens.
    await expect(async () => {
      if (!(await dialog.isVisible())) await page.getByRole("button", { name: "Dispatch a run" }).click({ timeout: 2_000 });
      await expect(dialog).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 30_000 });
    await dialog.getByLabel("Repository").selectOption({ label: REPOSITORY });
    await expect(dialog.getByLabel("Branch")).toHaveValue("main");
    await expect(dialog.getByLabel("Task kind")).toHaveValue("diagnose");
    await dialog.getByLabel("Instructions (optional)").fill(INSTRUCTIONS);
    // textContent: what the page shows, whitespace and all.
    expect(await dialog.getByTestId("instructions-preview").textContent()).toBe(`${HEADING}\n${INSTRUCTIONS}`);
    await dialog.getByRole("button", { name: "Dispatch run" }).click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    const runId = new URL(page.url()).pathname.split("/").at(-1)!;

    const db = await loopDb(test.info().project.name);
    try {
      const { rows } = await db.query<{ prompt: string; headSha: string; source: string; isFork: boolean; n: number }>(
        `SELECT r."prompt", r."headSha", r."source"::text AS "source", r."isFork",
                (SELECT count(*)::int FROM "AuditEntry" a WHERE a."action" = 'run.dispatch_manual' AND a."actorUserId" = r."actorUserId") AS "n"
           FROM "AgentDispatchRun" r WHERE r."id" = $1`,
        [runId],
      );
      expect(rows[0]).toMatchObject({ headSha: head, source: "manual", isFork: false, n: 1 });
      expect(rows[0]!.prompt.endsWith(`\n\n${HEADING}\n${INSTRUCTIONS}\n`)).toBe(true);
    } finally {
      await db.end();
    }
    await page.getByText("Show the assembled prompt").click();
    await expect(page.getByText("Check the rounding in `sum` first.")).toBeVisible();
  });

  test("a viewer has no dispatch button, and the procedure refuses them", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_viewer");
    await page.goto("/runs");
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Dispatch a run" })).toHaveCount(0);

    const db = await loopDb(test.info().project.name);
    let repositoryId = "";
    try {
      const { rows } = await db.query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY]);
      repositoryId = rows[0]!.id;
    } finally {
      await db.end();
    }
    const res = await page.request.post(`${baseURL}/api/trpc/runs.dispatchManual`, {
      headers: { origin: baseURL!, "content-type": "application/json" },
      data: { json: { repositoryId, requestId: crypto.randomUUID(), target: { kind: "branch", name: "main" }, taskKind: "diagnose" } },
    });
    expect(res.status(), `${demoUser("user_viewer").email}: ${await res.text()}`).toBe(403);
  });
});
