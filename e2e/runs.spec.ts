import { appendEvents, createRun, e2eDb, repositoryOf } from "./db";
import { demoPassword, demoUser, expect, signIn, test } from "./fixtures";

test.describe("signing in and browsing runs", () => {
  test("a maintainer signs in, sees seeded runs, filters by status and opens one", async ({ page }) => {
    await page.goto("/runs");
    // Signed out: sent to sign-in, and back to /runs afterwards.
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fruns/);
    await page.getByLabel("Email").fill(demoUser("user_maintainer").email);
    await page.getByLabel("Password").fill(demoPassword);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page).toHaveURL(/\/runs$/);
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();

    const rows = page.getByTestId("runs-table").getByRole("row");
    await expect(rows.first()).toBeVisible();
    expect(await rows.count()).toBeGreaterThan(5);

    await page.getByRole("navigation", { name: "Filter by status" }).getByRole("button", { name: /^Failed/ }).click();
    await expect(page).toHaveURL(/status=failed/);
    await expect(rows.first()).toBeVisible();
    const statuses = await page.getByTestId("runs-table").locator("[data-status]").evaluateAll((els) =>
      els.map((e) => e.getAttribute("data-status")),
    );
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(["failed"]));

    const first = rows.first().getByRole("link").first();
    const title = (await first.textContent())?.replace(/^#\d+/, "").trim() ?? "";
    await first.click();
    await expect(page).toHaveURL(/\/runs\/[a-z0-9]+$/);
    await expect(page.getByRole("heading", { level: 1 })).toContainText(title);
    await expect(page.getByTestId("transcript")).toBeVisible();
  });

  test("a wrong password is refused with a clear message", async ({ page }) => {
    await page.goto("/sign-in");
    await page.getByLabel("Email").fill(demoUser("user_viewer").email);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByRole("alert").filter({ hasText: /\S/ })).toHaveText("Wrong email or password.");
    await expect(page).toHaveURL(/\/sign-in/);
  });

  test("the health endpoint reports the database and migrations", async ({ request }) => {
    const res = await request.get("/api/health");
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: "ok", database: { reachable: true }, migrations: { pending: [] } });
  });

  test("a refused live feed is opened again: after a 429 the list still goes live and hears status changes", async ({ page, baseURL }) => {
    const db = await e2eDb();
    try {
      const repositoryId = await repositoryOf(db, demoUser("user_maintainer").email, "maintainer");
      const title = `Refused feed e2e ${Date.now()}`;
      const runId = await createRun(db, { repositoryId, title, status: "queued" });
      // The server refuses the first stream as it would past the account's cap; EventSource closes for good on it.
      let asked = 0;
      await page.route("**/api/runs/stream", (route) =>
        asked++ === 0
          ? route.fulfill({ status: 429, headers: { "retry-after": "10" }, contentType: "application/json", body: '{"error":{"message":"too many live views"}}' })
          : route.continue(),
      );
      await signIn(page, baseURL!, "user_maintainer");
      await page.goto(`/runs?q=${encodeURIComponent(title)}`);
      const row = page.getByTestId("runs-table").getByRole("row").filter({ hasText: title });
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "queued");
      await expect(page.getByTestId("list-live")).toHaveText("Live", { timeout: 15_000 });
      expect(asked).toBeGreaterThanOrEqual(2);
      await appendEvents(db, runId, [{ type: "status", payload: { scope: "run", from: "queued", to: "running", reason: "attempt 1 started" } }], { status: "running" });
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "running");
    } finally {
      await db.end();
    }
  });

  test("the list updates a run's status live, filters by text, and offers suggestions with their reason", async ({ page, baseURL }) => {
    const db = await e2eDb();
    try {
      const repositoryId = await repositoryOf(db, demoUser("user_maintainer").email, "maintainer");
      const title = `Live status e2e ${Date.now()}`;
      const runId = await createRun(db, { repositoryId, title, status: "queued" });
      await signIn(page, baseURL!, "user_maintainer");
      await page.goto(`/runs?q=${encodeURIComponent(title)}`);
      const row = page.getByTestId("runs-table").getByRole("row").filter({ hasText: title });
      await expect(row).toHaveCount(1);
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "queued");
      await expect(page.getByTestId("list-live")).toHaveText("Live");

      // A worker starts the run: status column and its status event in one transaction.
      await appendEvents(db, runId, [{ type: "status", payload: { scope: "run", from: "queued", to: "running", reason: "attempt 1 started" } }], { status: "running" });
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "running");

      await page.getByLabel("Search runs by title or source").fill("no run is called this zzz");
      await expect(page).toHaveURL(/q=no\+run/);
      await expect(page.getByText("No runs match these filters.")).toBeVisible();

      // A suggestion of our own (a diagnosis): dispatch it; with no repair stack configured for the
      // repository (no manual trigger rule for repair), "Attempt repair" says so.
      const suggestion = `Suggested e2e ${Date.now()}`;
      await createRun(db, { repositoryId, title: suggestion, status: "suggested" });
      await page.goto("/runs");
      const item = page.getByTestId("suggestions").getByRole("listitem").filter({ hasText: suggestion });
      await expect(item.getByRole("button", { name: "Attempt repair" })).toHaveAccessibleDescription(/No repair stack: this repository has no enabled manual trigger rule for repair tasks/);
      await item.getByRole("button", { name: "Diagnose with agent" }).click();
      await expect(page.getByText("Dispatched as a diagnose run: the first attempt is queued")).toBeVisible();
      await expect(item).toHaveCount(0);
      await page.getByLabel("Search runs by title or source").fill(suggestion);
      await expect(page.getByTestId("runs-table").getByRole("row").filter({ hasText: suggestion }).locator("[data-status]")).toHaveAttribute("data-status", "queued");
    } finally {
      await db.end();
    }
  });
});
