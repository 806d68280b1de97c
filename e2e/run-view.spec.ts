import AxeBuilder from "@axe-core/playwright";
import { createServer, connect, type Server, type Socket } from "node:net";
import type { Page } from "@playwright/test";
import { appendEvents, createRun, e2eDb, log, message, repositoryOf } from "./db";
import { demoUser, expect, signIn, test } from "./fixtures";

// The run page in a real browser against `next start`: live events over SSE,
// a cut connection resumed with Last-Event-ID, search, deep links, the
// controls' reasons, keyboard shortcuts and an accessibility check.

type Db = Awaited<ReturnType<typeof e2eDb>>;
let db: Db;
test.beforeAll(async () => {
  db = await e2eDb();
});
test.afterAll(async () => {
  await db?.end();
});

const maintainerEmail = () => demoUser("user_maintainer").email;

/**
 * A TCP proxy in front of the server: the page talks to it, so the test can
 * cut every open connection (the SSE stream included) and refuse new ones for
 * a while, as a network drop would. Chromium's offline emulation leaves an
 * established stream alone, so it cannot stand in for a cut.
 */
async function startProxy(target: URL) {
  const sockets = new Set<Socket>();
  /** Request lines and Last-Event-ID headers seen on the wire (EventSource's own reconnects included). */
  const requests: { path: string; lastEventId: string | null }[] = [];
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) return client.destroy();
    client.on("data", (chunk: Buffer) => {
      const head = chunk.toString("latin1");
      const line = /^GET (\S+) HTTP/.exec(head);
      if (line) requests.push({ path: line[1]!, lastEventId: /\r\nlast-event-id: *([^\r\n]*)/i.exec(head)?.[1] ?? null });
    });
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cut() {
      refusing = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      refusing = false;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** Every event row the virtualised transcript renders, scrolled top to bottom; fails on a seq shown twice at once. */
async function renderedSeqs(page: Page): Promise<number[]> {
  return page.getByTestId("transcript").evaluate(async (el) => {
    const seen = new Set<number>();
    el.scrollTop = 0;
    for (let y = 0; y <= el.scrollHeight + el.clientHeight; y += Math.max(100, el.clientHeight / 2)) {
      el.scrollTop = y;
      await new Promise((r) => setTimeout(r, 80));
      const now = [...el.querySelectorAll<HTMLElement>("[data-seq]")].map((e) => Number(e.dataset.seq));
      if (new Set(now).size !== now.length) throw new Error(`a seq is rendered twice: ${now.join(",")}`);
      now.forEach((s) => seen.add(s));
    }
    return [...seen].sort((a, b) => a - b);
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test.describe("the run view", () => {
  test("shows live events, and after a cut connection continues with no duplicate and no gap", async ({ page, baseURL }) => {
    const proxy = await startProxy(new URL(baseURL!));
    try {
      const runId = await createRun(db, { repositoryId: await repositoryOf(db, maintainerEmail(), "maintainer"), title: "Live transcript e2e" });
      await appendEvents(db, runId, [message("Looking at the failing check."), ...range(2, 20).map((i) => log(`setup line ${i}`))]);
      // Signed in on the server's own origin; the cookie is per host, so it goes through the proxy too.
      await signIn(page, baseURL!, "user_maintainer");
      await page.goto(`${proxy.url}/runs/${runId}`);
      await expect(page.getByRole("heading", { level: 1 })).toContainText("Live transcript e2e");
      await expect(page.locator("#event-20")).toBeVisible();
      await expect(page.getByTestId("stream-status")).toHaveText("Live");

      // Live: appended by "a worker" while the page is open; the view follows the tail.
      await appendEvents(db, runId, range(21, 30).map((i) => log(`live line ${i}`)));
      await expect(page.locator("#event-30")).toBeVisible();
      await expect(page.locator("#event-30")).toContainText("live line 30");

      // Cut every connection and keep the network down while the run goes on.
      proxy.cut();
      await expect(page.getByTestId("stream-status")).not.toHaveText("Live");
      await appendEvents(db, runId, range(31, 45).map((i) => log(`during the outage ${i}`)));
      await page.waitForTimeout(500);
      await expect(page.locator("#event-45")).toHaveCount(0);
      proxy.restore();

      await expect(page.locator("#event-45")).toBeVisible({ timeout: 15_000 });
      await expect(page.getByTestId("stream-status")).toHaveText("Live");
      await appendEvents(db, runId, [message("Back after the outage.")]);
      await expect(page.locator("#event-46")).toContainText("Back after the outage.");
      // On the wire: the first stream asked for what followed the 20 events the page loaded
      // (?lastEventId=20); the browser's reconnect resumed with Last-Event-ID: 30.
      const streams = proxy.requests.filter((r) => r.path.startsWith(`/api/runs/${runId}/events`));
      expect(streams[0]).toEqual({ path: `/api/runs/${runId}/events?lastEventId=20`, lastEventId: null });
      expect(streams.slice(1).map((r) => r.lastEventId)).toContain("30");
      expect(await renderedSeqs(page)).toEqual(range(1, 46));
      await expect(page.getByText("46/46 events")).toBeVisible();
    } finally {
      await proxy.close();
    }
  });

  test("search jumps to a match outside the loaded window, and a deep link scrolls to its event", async ({ page, baseURL }) => {
    const runId = await createRun(db, { repositoryId: await repositoryOf(db, maintainerEmail(), "maintainer"), title: "Search e2e", status: "succeeded" });
    for (let start = 1; start <= 3_000; start += 500) {
      await appendEvents(db, runId, range(start, start + 499).map((i) => (i === 123 ? message("The zebracorn regression starts here.") : log(`bulk line ${i}`))));
    }
    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/runs/${runId}`);
    await expect(page.locator("#event-3000")).toBeVisible();
    await expect(page.locator("#event-123")).toHaveCount(0);
    // The server's HTML shows the newest events before the page is interactive: keys wait for it.
    await expect(page.getByTestId("transcript")).toHaveAttribute("data-hydrated", "");

    await page.keyboard.press("/");
    await expect(page.getByLabel("Search transcript")).toBeFocused();
    await page.keyboard.type("ZEBRACORN");
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("search-position")).toHaveText("1 of 1");
    await expect(page.locator("#event-123")).toBeInViewport();
    await expect(page.locator("#event-123")).toContainText("zebracorn regression");

    await page.goto(`/runs/${runId}#event-50`);
    await expect(page.locator("#event-50")).toBeInViewport();
    await expect(page.locator("#event-50")).toHaveAttribute("aria-current", "true");

    // Keyboard: G to the newest event, g g to the first, j/k between events, ? for help.
    await page.getByTestId("transcript").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("Shift+G");
    await expect(page.locator("#event-3000")).toBeInViewport();
    await page.keyboard.press("g");
    await page.keyboard.press("g");
    await expect(page.locator("#event-1")).toBeInViewport();
    await page.keyboard.press("j");
    await expect(page.locator("#event-2")).toHaveAttribute("aria-current", "true");
    await page.keyboard.press("?");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeHidden();
  });

  test("controls say why they are disabled; a maintainer cancels after confirming, then retries", async ({ page, baseURL }) => {
    const repositoryId = await repositoryOf(db, maintainerEmail(), "maintainer");
    const runId = await createRun(db, { repositoryId, title: "Controls e2e" });
    await appendEvents(db, runId, [message("Working on it.")]);

    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/runs/${runId}`);
    const controls = page.getByRole("region", { name: "Run controls" });
    await expect(controls.getByRole("button", { name: "Cancel run" })).toHaveAccessibleDescription(/needs the maintainer role/);
    await expect(controls.getByRole("button", { name: "Retry" })).toHaveAccessibleDescription(/running; retry is for failed, cancelled or escalated runs/);
    await expect(controls.getByRole("button", { name: "Fork" })).toHaveAccessibleDescription(/needs the maintainer role/);
    await expect(controls.getByRole("button", { name: "Attach context" })).toHaveAccessibleDescription(/needs the maintainer role/);

    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    // Attach context: a note with a pasted token reaches the transcript live, the token redacted.
    const token = `ghp_${"Zx9Yw8Vu7T".repeat(4)}`;
    await page.getByRole("region", { name: "Run controls" }).getByRole("button", { name: "Attach context" }).click();
    const attach = page.getByRole("dialog", { name: "Attach context" });
    await attach.getByLabel("Title").fill("Flaky clock");
    await attach.getByRole("button", { name: "Attach" }).click();
    await expect(attach.getByRole("alert")).toHaveText("Required");
    await attach.getByLabel("Note").fill(`The clock test is **flaky**; CI used ${token}.`);
    await attach.getByRole("button", { name: "Attach" }).click();
    await expect(attach).toBeHidden();
    const attached = page.getByTestId("transcript").locator("div", { hasText: "context attached" }).last();
    await expect(attached).toContainText("Flaky clock");
    await expect(attached).toContainText("1 redacted");
    await expect(page.getByTestId("transcript")).not.toContainText(token);
    const cancel = page.getByRole("region", { name: "Run controls" }).getByRole("button", { name: "Cancel run" });
    await expect(cancel).not.toHaveAttribute("aria-disabled", "true");
    await cancel.click();
    const dialog = page.getByRole("dialog", { name: /Cancel run/ });
    await dialog.getByLabel("Reason (optional)").fill("e2e: no longer needed");
    await dialog.getByRole("button", { name: "Cancel run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("Cancelled");
    // The status change arrives on the stream too, and the stream completes.
    await expect(page.getByTestId("transcript")).toContainText("e2e: no longer needed");
    await expect(page.getByTestId("stream-status")).toHaveText("Complete");
    await expect(cancel).toHaveAccessibleDescription(/already cancelled/);

    // Retry makes the run live again: a new attempt is queued and the stream reopens.
    const retry = page.getByRole("region", { name: "Run controls" }).getByRole("button", { name: "Retry" });
    await expect(retry).not.toHaveAttribute("aria-disabled", "true");
    await retry.click();
    await expect(page.getByTestId("run-status")).toHaveText("Queued");
    await expect(page.getByTestId("stream-status")).toHaveText("Live");
  });

  test("lists the triggers dropped in the run's favour with their deliveries, and says where its code comes from", async ({ page, baseURL }) => {
    const runId = await createRun(db, { repositoryId: await repositoryOf(db, maintainerEmail(), "maintainer"), title: "Dropped triggers e2e", status: "suggested" });
    const reason = "a workflow_job payload names no head repository <img src=x onerror=alert(1)>";
    await db.query(`UPDATE "AgentDispatchRun" SET "isFork" = true, "origin" = 'unknown', "originReason" = $2 WHERE "id" = $1`, [runId, reason]);
    // What evaluation writes for a redelivery (same dedupe key) and for a rule another rule took precedence over.
    const redelivery = `e2e-redelivery-${runId}`;
    await db.query(
      `INSERT INTO "WebhookDelivery" ("id", "deliveryId", "source", "event", "action", "payload", "outcome", "detail", "processedAt")
       VALUES ($1, $1, 'github', 'workflow_job', 'completed', '{}', 'duplicate', 'duplicate', now())`,
      [redelivery],
    );
    await db.query(
      `INSERT INTO "TriggerDrop" ("id", "dedupeKey", "reason", "deliveryId", "runId", "createdAt") VALUES
         ($1, $3, 'duplicate trigger: run already exists for this dedupe key', $4, $2, now() - interval '1 minute'),
         ($5, 'failed-check:other', 'superseded by rule "web CI": a repository''s rule takes precedence <b>over</b> a rule for every repository', $4, $2, now())`,
      [`${runId}-d1`, runId, `e2e:${runId}`, redelivery, `${runId}-d2`],
    );
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    const origin = page.getByTestId("run-origin");
    await expect(origin).toHaveText(/unknown origin/);
    await expect(origin).toHaveAttribute("title", `${reason} (untrusted: an untrusted pool, no secrets)`);
    const dropped = page.getByRole("region", { name: "Triggers dropped" });
    await expect(dropped.getByTestId("dropped-triggers-summary")).toHaveText("1 duplicate trigger dropped, 1 superseded by this run's rule");
    await expect(dropped.locator('[data-kind="duplicate"]')).toContainText(`delivery ${redelivery} · github workflow_job.completed`);
    // Reasons are text: the markup in them is shown, never rendered.
    await expect(dropped.locator('[data-kind="superseded"]')).toContainText("takes precedence <b>over</b> a rule");
    await expect(page.locator("img[src=x]")).toHaveCount(0);
  });

  test("opens a patch artifact as a diff with line numbers", async ({ page, baseURL }) => {
    const { rows } = await db.query<{ id: string; runId: string }>(`SELECT "id", "runId" FROM "Artifact" WHERE "kind" = 'patch' AND "content" LIKE 'diff --git%' LIMIT 1`);
    test.skip(!rows[0], "the demo seed has no patch artifact");
    await signIn(page, baseURL!, "user_admin");
    await page.goto(`/runs/${rows[0]!.runId}/artifacts/${rows[0]!.id}`);
    await expect(page.getByRole("navigation", { name: "Changed files" })).toBeVisible();
    await expect(page.locator("table td").first()).toBeVisible();
    expect(await page.locator("tr.bg-green-50, tr.bg-red-50").count()).toBeGreaterThan(0);
  });

  test("has no serious or critical accessibility violations on /runs and /runs/<id>", async ({ page, baseURL }) => {
    test.setTimeout(150_000);
    const runId = await createRun(db, { repositoryId: await repositoryOf(db, maintainerEmail(), "maintainer"), title: "Axe e2e" });
    await appendEvents(db, runId, [message("Hello **world** with a [link](https://example.test)."), log("\u001b[31mred\u001b[0m output"), { type: "tool_call", payload: { id: "t1", name: "bash", input: { command: "npm test" }, startedAt: new Date().toISOString() } }]);
    await signIn(page, baseURL!, "user_maintainer");
    // Both colour schemes: dark mode follows the system, and contrast must hold in each.
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      for (const path of ["/runs", `/runs/${runId}`]) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
        if (path !== "/runs") await expect(page.locator("#event-3")).toBeVisible();
        const results = await new AxeBuilder({ page }).analyze();
        const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(" | ")}`), `${path} (${colorScheme})`).toEqual([]);
      }
    }
  });
});
