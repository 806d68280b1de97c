import type { Page } from "@playwright/test";
import { loopDb } from "../db";
import { demoUser, expect, signIn, test } from "../fixtures";
import { clickUntil, DEMO_REPOSITORY as REPOSITORY, demoMainHead as mainHead, insertLocalPr, postTrpc } from "./demo-forge";

// Manual dispatch by clicks (issue 19): a maintainer opens "Dispatch a run" on /runs, picks the
// demo repository's main branch, the diagnose task (the seeded manual rule) and types
// instructions; the dialog shows the block the prompt gets, the run opens, and its stored prompt
// ends with exactly that block. The same dialog opens from the repository's page (preset with the
// repository) and from a pull request's run page (preset with the PR). A viewer gets no button on
// any of those pages, and the procedure refuses them.
// Under e2e/loop/ so it has its own server and database: the run it makes changes no other
// spec's starting state.

const HEADING = "## Instructions from the person who dispatched this run";
// Leading spaces, a tab, a blank line and non-ASCII: kept byte for byte.
const INSTRUCTIONS = "  Check the rounding in `sum` first.\n\n\tThen the lockfile — ünïcode stays.";

const PR_NUMBER = 7;
const PR_BRANCH = "alex/round-totals";

/** Opens "Dispatch a run" on the page. */
async function openDialog(page: Page) {
  const dialog = page.getByRole("dialog", { name: "Dispatch a run" });
  await clickUntil(page.getByRole("button", { name: "Dispatch a run" }), dialog);
  return dialog;
}

test.describe("manual dispatch", () => {
  test.setTimeout(180_000);

  test("a maintainer dispatches a diagnosis on main with instructions; the run's prompt carries them byte for byte", async ({ page, baseURL }) => {
    // The demo bootstrap pushes the repository after the server starts.
    await expect.poll(mainHead, { timeout: 120_000, intervals: [1_000] }).not.toBe("");
    const head = mainHead();
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/runs");
    const dialog = await openDialog(page);
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

  test("from the repository page, then from a pull request's run page, the same dialog comes preset with them", async ({ page, baseURL }) => {
    await expect.poll(mainHead, { timeout: 120_000, intervals: [1_000] }).not.toBe("");
    const head = mainHead();
    const db = await loopDb(test.info().project.name);
    try {
      const repositoryId = await insertLocalPr(db, { id: "pr_e2e_manual_dispatch", number: PR_NUMBER, branch: PR_BRANCH, head, title: "Round the totals" });
      await signIn(page, baseURL!, "user_maintainer");

      // The repository page: the dialog knows the repository; the maintainer picks the PR.
      await page.goto(`/settings/repositories/${repositoryId}`);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(REPOSITORY);
      const dialog = await openDialog(page);
      await expect(dialog.getByLabel("Repository")).toHaveValue(repositoryId);
      await expect(dialog.getByLabel("Repository").locator("option")).toHaveText([REPOSITORY]);
      await expect(dialog.getByLabel("Run on")).toHaveValue("branch");
      await dialog.getByLabel("Run on").selectOption("pull_request");
      await dialog.getByLabel("Pull request number").fill(String(PR_NUMBER));
      await expect(dialog.getByLabel("Task kind")).toHaveValue("diagnose");
      await dialog.getByRole("button", { name: "Dispatch run" }).click();
      await page.waitForURL(/\/runs\/[a-z0-9]+$/);
      const first = new URL(page.url()).pathname.split("/").at(-1)!;

      // That run is on the PR; its page offers the dialog preset with the PR.
      await expect(page.getByText(`PR #${PR_NUMBER} Round the totals`)).toBeVisible();
      const again = await openDialog(page);
      await expect(again.getByLabel("Repository")).toHaveValue(repositoryId);
      await expect(again.getByLabel("Run on")).toHaveValue("pull_request");
      await expect(again.getByLabel("Pull request number")).toHaveValue(String(PR_NUMBER));
      await again.getByLabel("Instructions (optional)").fill("Look at the rounding only.");
      await again.getByRole("button", { name: "Dispatch run" }).click();
      await page.waitForURL((url) => /\/runs\/[a-z0-9]+$/.test(url.pathname) && !url.pathname.endsWith(first));
      const second = new URL(page.url()).pathname.split("/").at(-1)!;

      // Two runs, each on the PR at its head, each dispatched by hand once.
      const { rows } = await db.query<{ id: string; number: number; headSha: string; source: string; prompt: string }>(
        `SELECT r."id", p."number", r."headSha", r."source"::text AS "source", r."prompt" FROM "AgentDispatchRun" r JOIN "PullRequest" p ON p."id" = r."pullRequestId"
          WHERE r."id" = ANY($1::text[]) ORDER BY r."createdAt"`,
        [[first, second]],
      );
      expect(rows.map((r) => ({ id: r.id, number: r.number, headSha: r.headSha, source: r.source }))).toEqual([
        { id: first, number: PR_NUMBER, headSha: head, source: "manual" },
        { id: second, number: PR_NUMBER, headSha: head, source: "manual" },
      ]);
      expect(rows[1]!.prompt.endsWith(`\n\n${HEADING}\nLook at the rounding only.\n`)).toBe(true);
    } finally {
      await db.end();
    }
  });

  test("a viewer has no dispatch button, and the procedure refuses them", async ({ page, baseURL }) => {
    const db = await loopDb(test.info().project.name);
    let repositoryId = "";
    let prRunId = "";
    try {
      const { rows } = await db.query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY]);
      repositoryId = rows[0]!.id;
      // The run the maintainer dispatched on the PR (the test before).
      const { rows: runs } = await db.query<{ id: string }>(`SELECT "id" FROM "AgentDispatchRun" WHERE "pullRequestId" = 'pr_e2e_manual_dispatch' LIMIT 1`);
      prRunId = runs[0]?.id ?? "";
    } finally {
      await db.end();
    }
    expect(prRunId).not.toBe("");
    await signIn(page, baseURL!, "user_viewer");
    await page.goto("/runs");
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Dispatch a run" })).toHaveCount(0);
    await page.goto(`/settings/repositories/${repositoryId}`);
    await expect(page.getByText("you are viewer", { exact: true })).toBeVisible();
    await expect(page.getByRole("button", { name: "Dispatch a run" })).toHaveCount(0);
    await page.goto(`/runs/${prRunId}`);
    await expect(page.getByText(`PR #${PR_NUMBER} Round the totals`)).toBeVisible();
    await expect(page.getByRole("button", { name: "Dispatch a run" })).toHaveCount(0);
    for (const target of [{ kind: "branch", name: "main" }, { kind: "pull_request", number: PR_NUMBER }]) {
      const res = await postTrpc(page, baseURL!, "runs.dispatchManual", { repositoryId, requestId: crypto.randomUUID(), target, taskKind: "diagnose" });
      expect(res.status(), `${demoUser("user_viewer").email}: ${await res.text()}`).toBe(403);
    }
  });
});
