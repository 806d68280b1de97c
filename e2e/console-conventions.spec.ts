import type { Page } from "@playwright/test";
import { appendEvents, createRun, message, repositoryOf, withE2eDb, type EventInput } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// The console's conventions in a real browser: times (relative, live, absolute on hover), filters
// that live in the URL, the theme switch and its toasts, global shortcuts, and the not-found page.

/** A run in a repository the maintainer maintains, with these events. */
const seedRun = (title: string, opts: { status?: string; events?: EventInput[] } = {}) =>
  withE2eDb(async (db) => {
    const repositoryId = await repositoryOf(db, demoUser("user_maintainer").email, "maintainer");
    const runId = await createRun(db, { repositoryId, title, status: opts.status });
    if (opts.events) await appendEvents(db, runId, opts.events);
    return runId;
  });

/** What the page's own locale and zone make of an instant: the tooltip must say exactly this. */
const absoluteInPage = (page: Page, iso: string) =>
  page.evaluate((at) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "long" }).format(new Date(at)), iso);

test.describe("times", () => {
  test("a relative time keeps up as time passes and shows the absolute local time on hover", async ({ page, baseURL }) => {
    const title = `Relative time e2e ${Date.now()}`;
    await seedRun(title, { status: "queued" });
    await page.clock.install({ time: new Date() });
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs?q=${encodeURIComponent(title)}`);

    const created = page.getByTestId("runs-table").getByRole("row").filter({ hasText: title }).locator("time");
    await expect(created).toHaveText("just now");
    await page.clock.fastForward("03:00");
    await expect(created).toHaveText("3 min ago");

    const iso = (await created.getAttribute("datetime"))!;
    const absolute = await absoluteInPage(page, iso);
    expect(absolute).toContain(String(new Date(iso).getFullYear()));
    // The live list re-renders its rows (a refetch, the ticking relative time), which can drop a
    // hover that landed just before: hover again until the tooltip shows, as a person would.
    await expect(async () => {
      await page.mouse.move(0, 0);
      await created.hover();
      await expect(page.getByRole("tooltip")).toHaveText(absolute, { timeout: 2_000 });
    }).toPass({ timeout: 15_000 });
  });

  test("the transcript shows HH:MM:SS, with the date on hover", async ({ page, baseURL }) => {
    const runId = await seedRun(`Transcript time e2e ${Date.now()}`, { events: [message("A timed line.")] });
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    const time = page.locator("#event-1 time");
    await expect(time).toHaveText(/^\d{2}:\d{2}:\d{2}$/);
    // The tooltip is the client's: hover once the transcript is interactive.
    await expect(page.getByTestId("transcript")).toHaveAttribute("data-hydrated", "");
    await time.hover();
    await expect(page.getByRole("tooltip")).toHaveText(await absoluteInPage(page, (await time.getAttribute("datetime"))!));
  });
});

test.describe("filters in the URL", () => {
  test("the approvals queue's filters survive a reload", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/approvals");
    const filters = page.getByRole("group", { name: "Filters" });
    await filters.getByLabel("Action").selectOption("push_commits");
    await filters.getByLabel("Age").selectOption({ label: "older than 1 day" });
    await filters.getByLabel("Stack").fill("no-such-stack-zzz");
    await expect(page).toHaveURL(/action=push_commits/);
    await expect(page).toHaveURL(/age=1d/);
    await expect(page).toHaveURL(/stack=no-such-stack-zzz/);
    await expect(page.getByText("Nothing waits for approval.")).toBeVisible();

    await page.reload();
    await expect(filters.getByLabel("Action")).toHaveValue("push_commits");
    await expect(filters.getByLabel("Age")).toHaveValue("1d");
    await expect(filters.getByLabel("Stack")).toHaveValue("no-such-stack-zzz");
    await expect(page.getByText("Nothing waits for approval.")).toBeVisible();

    // Back walks through the choices one by one.
    await page.goBack();
    await expect(filters.getByLabel("Age")).toHaveValue("");
    await expect(filters.getByLabel("Action")).toHaveValue("push_commits");
  });

  test("the audit log's text filter survives a reload, and hostile text stays text", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_admin");
    const hostile = `"><img src=x onerror=alert(1)>&status=all#zzz`;
    await page.goto(`/audit?action=${encodeURIComponent(hostile)}`);
    await expect(page.getByLabel("Filter by action")).toHaveValue(hostile);
    await expect(page.getByText("No audit entries match.")).toBeVisible();
    await expect(page.locator("main img")).toHaveCount(0);

    await page.getByLabel("Filter by action").fill("zzz-no-such-action");
    await expect(page).toHaveURL(/action=zzz-no-such-action/);
    await page.reload();
    await expect(page.getByLabel("Filter by action")).toHaveValue("zzz-no-such-action");
    await expect(page.getByText("No audit entries match.")).toBeVisible();
  });
});

test.describe("theme", () => {
  test("the theme switch applies to the page and the toasts, persists across a reload, and paints before any script", async ({ page, context, baseURL }) => {
    test.setTimeout(90_000);
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.emulateMedia({ colorScheme: "light" });
    const runId = await seedRun(`Theme e2e ${Date.now()}`);
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    const html = page.locator("html");
    const theme = page.getByRole("group", { name: "Theme" });
    const toaster = page.locator("[data-sonner-toaster]");
    const copyLink = page.getByRole("button", { name: "Copy link to this run" });

    await theme.getByRole("button", { name: "Dark" }).click();
    await expect(theme.getByRole("button", { name: "Dark" })).toHaveAttribute("aria-pressed", "true");
    await expect(html).toHaveClass(/\bdark\b/);
    await copyLink.click();
    await expect(page.getByText("Copied link to this run")).toBeVisible();
    await expect(toaster).toHaveAttribute("data-sonner-theme", "dark");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(new URL(`/runs/${runId}`, baseURL).href);

    await page.reload();
    await expect(html).toHaveClass(/\bdark\b/);
    await expect(theme.getByRole("button", { name: "Dark" })).toHaveAttribute("aria-pressed", "true");
    await copyLink.click();
    await expect(toaster).toHaveAttribute("data-sonner-theme", "dark");

    // With no bundle at all, the first paint is already dark: the head script set it, not React.
    await page.route("**/_next/static/**/*.js", (route) => route.abort());
    await page.reload();
    await expect(html).toHaveClass(/\bdark\b/);
    await expect(html).toHaveAttribute("data-theme", "dark");
    await page.unroute("**/_next/static/**/*.js");
    await page.reload();

    await theme.getByRole("button", { name: "Light" }).click();
    await expect(html).not.toHaveClass(/\bdark\b/);
    await copyLink.click();
    await expect(toaster).toHaveAttribute("data-sonner-theme", "light");

    // System follows the OS, live.
    await theme.getByRole("button", { name: "System" }).click();
    await expect(html).not.toHaveClass(/\bdark\b/);
    await page.emulateMedia({ colorScheme: "dark" });
    await expect(html).toHaveClass(/\bdark\b/);
    await page.reload();
    await expect(html).toHaveAttribute("data-theme", "system");
    await expect(html).toHaveClass(/\bdark\b/);
  });
});

test.describe("keyboard shortcuts", () => {
  test("? lists the shortcuts, g a goes to approvals, and nothing fires while typing", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/runs");
    await expect(page.getByTestId("list-live")).toBeVisible();

    await page.keyboard.press("?");
    const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText("Go to approvals");
    await expect(dialog).toContainText("Go to runs");
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();

    // Typing "g a" into the search box searches; it does not navigate.
    const search = page.getByLabel("Search runs by title or source");
    await search.click();
    await page.keyboard.type("ga");
    await expect(page).toHaveURL(/\/runs\?q=ga$/);
    await expect(search).toHaveValue("ga");

    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("g");
    await page.keyboard.press("a");
    await expect(page).toHaveURL(/\/approvals$/);
    await expect(page.getByRole("heading", { name: "Approvals", level: 1 })).toBeVisible();

    await page.keyboard.press("g");
    await page.keyboard.press("s");
    await expect(page).toHaveURL(/\/stacks$/);
  });

  test("on a run page, the transcript keeps its keys and g r still leaves", async ({ page, baseURL }) => {
    const runId = await seedRun(`Shortcuts e2e ${Date.now()}`, { events: [message("one"), message("two")] });
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    await expect(page.locator("#event-2")).toBeVisible();
    await page.getByTestId("transcript").click({ position: { x: 5, y: 5 } });

    await page.keyboard.press("?");
    const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await expect(dialog).toHaveCount(1);
    await expect(dialog).toContainText("Next event");
    await expect(dialog).toContainText("Go to runs");
    await page.keyboard.press("Escape");

    await page.keyboard.press("g");
    await page.keyboard.press("r");
    await expect(page).toHaveURL(/\/runs$/);
  });
});

test.describe("not found", () => {
  test("an unknown address and a missing record render the not-found page inside the console", async ({ page, baseURL }) => {
    await page.goto("/no-such-page");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fno-such-page/);

    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/no-such-page/deeper");
    await expect(page.getByRole("heading", { name: "Not found", level: 1 })).toBeVisible();
    await expect(page.getByTestId("not-found")).toContainText("/no-such-page/deeper");
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();

    await page.goto("/runs/e2e-no-such-run");
    await expect(page.getByRole("heading", { name: "Not found", level: 1 })).toBeVisible();
    await page.getByRole("link", { name: "Go to runs" }).click();
    await expect(page).toHaveURL(/\/runs$/);

    await page.goto("/stacks/no-such-stack");
    await expect(page.getByRole("heading", { name: "Not found", level: 1 })).toBeVisible();
  });
});
