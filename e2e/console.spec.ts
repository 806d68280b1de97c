import AxeBuilder from "@axe-core/playwright";
import { expect, signIn, test } from "./fixtures";
import { E2E_METRICS_TOKEN } from "./metrics-token";

test.describe("metrics and audit", () => {
  test("the metrics page shows figures from the database, with charts over the range in the URL, and /api/metrics serves Prometheus text", async ({ page, baseURL, request }) => {
    await signIn(page, baseURL!, "user_admin");
    await page.goto("/metrics");
    await expect(page.getByRole("heading", { name: "Metrics" })).toBeVisible();
    await expect(page.getByText("Queue wait p50 / p95")).toBeVisible();
    const queued = page.locator("dt", { hasText: /^Queued now$/ }).locator("xpath=following-sibling::dd[1]");
    await expect(queued).toHaveText(/^\d+$/);
    await expect(page.getByText("Write-backs succeeded, all time")).toBeVisible();
    await expect(page.getByRole("heading", { name: "Over time (per day)" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Runs created" })).toBeVisible();
    await expect(page.locator(".recharts-surface").first()).toBeVisible();
    // The range lives in the URL: chosen, it survives a reload.
    await page.getByLabel("Time window").selectOption("24h");
    await expect(page).toHaveURL(/[?&]range=24h/);
    await expect(page.getByRole("heading", { name: "Over time (per hour)" })).toBeVisible();
    await page.reload();
    await expect(page.getByLabel("Time window")).toHaveValue("24h");
    await expect(page.getByRole("heading", { name: "Over time (per hour)" })).toBeVisible();
    // Without the token a production server answers nothing.
    const refused = await request.get("/api/metrics");
    expect(refused.status()).toBe(401);
    expect(await refused.text()).not.toContain("airlock_");
    const scrape = await request.get("/api/metrics", { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` } });
    expect(scrape.headers()["content-type"]).toContain("text/plain");
    const text = await scrape.text();
    expect(text).toMatch(/^airlock_runs_queued \d+$/m);
    expect(text).toMatch(/^# TYPE airlock_queue_wait_seconds histogram$/m);
    expect(text).toMatch(/^airlock_process_resident_memory_bytes \d+$/m);
    const violations = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(violations.map((v) => v.id)).toEqual([]);
  });

  test("the audit log lists who did what, and filters by action", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_admin");
    await page.goto("/audit");
    await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();
    const rows = page.getByTestId("audit-table").getByRole("row");
    await expect(rows.first()).toBeVisible();
    await page.getByLabel("Filter by action").fill("zzz-no-such-action");
    await expect(page.getByText("No audit entries match.")).toBeVisible();
    const violations = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(violations.map((v) => v.id)).toEqual([]);
  });

  test("signed-out visitors are sent to sign-in from every console page", async ({ page }) => {
    for (const path of ["/approvals", "/stacks", "/triggers", "/policies", "/metrics", "/audit", "/settings"]) {
      await page.goto(path);
      await expect(page).toHaveURL(new RegExp(`/sign-in\\?next=${encodeURIComponent(path)}`));
    }
  });
});
