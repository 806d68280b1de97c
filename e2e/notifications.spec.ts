import AxeBuilder from "@axe-core/playwright";
import { createNotification, createRun, e2eDb, repositoryOf, unreadNotifications } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

test.describe("notifications", () => {
  // Long flows on a shared 2-core machine: the first page of a cold server alone can take 10 s.
  test.slow();

  test("a maintainer sees the unread count on the bell, opens /notifications, marks read and the count drops", async ({ page, baseURL }) => {
    const maintainer = demoUser("user_maintainer").email;
    const db = await e2eDb();
    const repositoryId = await repositoryOf(db, maintainer, "maintainer");
    const runId = await createRun(db, { repositoryId, title: "e2e escalated run", status: "escalated" });
    const before = await unreadNotifications(db, maintainer);
    const stamp = Date.now();
    const escalation = `PR escalated after 3 fix runs ${stamp}`;
    // Markup in stored text must show as text, never as elements.
    const hostile = `<img src=x onerror="window.__pwned=1"> rollback ${stamp}`;
    await createNotification(db, { repositoryId, title: escalation, body: "Round 3 still fails:\ntest_sum expected 3, got 4", href: `/runs/${runId}`, runId });
    await createNotification(db, { repositoryId, title: hostile, kind: "triage_rollback", body: "<b>not bold</b>", href: "/approvals" });
    await db.end();

    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/runs");
    const bell = page.getByRole("link", { name: new RegExp(`^Notifications, ${before + 2} unread$`) });
    await expect(bell).toBeVisible();
    await expect(page.getByTestId("notification-count")).toHaveText(String(before + 2));

    // Keyboard: the bell is reachable and opens the page with Enter.
    await bell.focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/notifications$/);
    await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();

    const list = page.getByTestId("notification-list");
    const hostileItem = list.getByRole("listitem").filter({ hasText: `rollback ${stamp}` });
    await expect(hostileItem.getByRole("link", { name: hostile })).toBeVisible();
    await expect(hostileItem).toContainText("<b>not bold</b>");
    await expect(list.locator("img, b")).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    await hostileItem.getByRole("button", { name: `Mark read: ${hostile}` }).click();
    await expect(hostileItem.getByRole("button", { name: /^Mark read/ })).toHaveCount(0);
    await expect(page.getByTestId("notification-count")).toHaveText(String(before + 1));
    // Read state is stored, not just shown: it survives a reload (server-rendered again).
    await page.reload();
    await expect(hostileItem).toHaveAttribute("data-read", "true");
    await expect(page.getByTestId("notification-count")).toHaveText(String(before + 1));

    const violations = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(violations.map((v) => v.id)).toEqual([]);

    // Following a notification's link opens its run and marks it read.
    await list.getByRole("link", { name: escalation }).click();
    await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
    await expect(page.getByRole("heading", { level: 1 })).toContainText("e2e escalated run");
    if (before === 0) await expect(page.getByTestId("notification-count")).toHaveCount(0);
    else await expect(page.getByTestId("notification-count")).toHaveText(String(before));
    await expect(page.getByRole("link", { name: before === 0 ? /^Notifications$/ : /^Notifications, \d+ unread$/ })).toBeVisible();
  });

  test("mark all read clears the bell, and another person's count is untouched", async ({ page, baseURL, browser }) => {
    const maintainer = demoUser("user_maintainer").email;
    const db = await e2eDb();
    const repositoryId = await repositoryOf(db, maintainer, "maintainer");
    for (let i = 0; i < 3; i++) await createNotification(db, { repositoryId, title: `Write-back failed ${i} ${Date.now()}`, kind: "write_back_failed", href: "/approvals" });
    expect(await unreadNotifications(db, maintainer)).toBeGreaterThanOrEqual(3);
    await db.end();

    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/notifications");
    await expect(page.getByTestId("notification-count")).toBeVisible();
    await page.getByRole("button", { name: "Mark all read" }).click();
    await expect(page.getByTestId("notification-count")).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Mark all read" })).toBeDisabled();
    await page.getByLabel("Unread only").check();
    await expect(page.getByText("No unread notifications.")).toBeVisible();

    // The admin sees the same notifications and still has them unread.
    const context = await browser.newContext({ baseURL });
    const other = await context.newPage();
    await signIn(other, baseURL!, "user_admin");
    await other.goto("/notifications");
    await expect(other.getByTestId("notification-count")).toBeVisible();
    expect(Number((await other.getByTestId("notification-count").textContent())?.replace("+", ""))).toBeGreaterThanOrEqual(3);
    await context.close();
  });
});
