import { chromium } from "@playwright/test";
import { appendAtRate, percentile } from "./data";
import type { BenchServer } from "./server";

// (a) The run page in Chromium on a 100,000-event run: first transcript paint,
// jump to the oldest event, JS heap after load, and append-to-DOM latency of
// live events at 200/s. A MutationObserver installed before the page loads
// records when rows appear, on the same clock the appender uses.

export type BrowserResult = {
  /** First paint again on a second visit (browser cache warm). */
  firstPaintWarmMs: number;
  /** Navigation timing of the page load: time to first byte and to DOMContentLoaded. */
  ttfbMs: number;
  domContentLoadedMs: number;
  /** When the transcript's rows became interactive (the virtualised list after hydration). */
  interactiveMs: number;
  firstPaintMs: number;
  oldestMs: number;
  heapMb: number;
  mountedRows: number;
  longestTaskMs: number;
  live: { appended: number; seen: number; p50: number; p99: number };
};

declare global {
  interface Window {
    __firstRow?: number;
    __interactive?: number;
    __seen?: Record<number, number>;
    __tasks?: number[];
  }
}

/** A warm server: the run page's code loaded and the database pool open (on another, small run). */
async function warmUp(server: BenchServer, smallRunId: string) {
  for (const path of ["/runs", `/runs/${smallRunId}`, `/runs/${smallRunId}`, `/runs/${smallRunId}`]) {
    const res = await fetch(`${server.base}${path}`, { headers: { cookie: server.cookie } });
    await res.text();
  }
}

async function firstRowTiming(page: import("@playwright/test").Page) {
  await page.locator("[data-index] [data-seq]").first().waitFor({ timeout: 30_000 });
  return page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
    return { first: window.__firstRow ?? Number.NaN, interactive: window.__interactive ?? Number.NaN, ttfb: nav?.responseStart ?? Number.NaN, dcl: nav?.domContentLoadedEventEnd ?? Number.NaN };
  });
}

export async function browserBench(server: BenchServer, runId: string, smallRunId: string, opts: { rate: number; seconds: number }): Promise<BrowserResult> {
  await warmUp(server, smallRunId);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const [name, value] = server.cookie.split(";")[0]!.split("=");
    await context.addCookies([{ name: name!, value: value!, url: server.base }]);
    await context.addInitScript(() => {
      window.__seen = {};
      window.__tasks = [];
      new MutationObserver((records) => {
        const now = Date.now();
        for (const r of records) {
          r.addedNodes.forEach((n) => {
            if (!(n instanceof HTMLElement)) return;
            const rows = n.matches("[data-seq]") ? [n] : Array.from(n.querySelectorAll<HTMLElement>("[data-seq]"));
            for (const row of rows) {
              window.__firstRow ??= performance.now();
              if (row.closest("[data-index]")) window.__interactive ??= performance.now();
              const seq = Number(row.dataset.seq);
              window.__seen![seq] ??= now;
            }
          });
        }
      }).observe(document, { childList: true, subtree: true });
      new PerformanceObserver((list) => list.getEntries().forEach((e) => window.__tasks!.push(e.duration))).observe({ type: "longtask", buffered: true });
    });
    const page = await context.newPage();
    // Cold browser cache (a first visit), then a second visit with the scripts cached.
    await page.goto(`${server.base}/runs/${runId}`);
    const timing = await firstRowTiming(page);
    const firstPaintMs = timing.first;
    await page.goto(`${server.base}/runs`);
    await page.goto(`${server.base}/runs/${runId}`);
    const firstPaintWarmMs = (await firstRowTiming(page)).first;
    const cdp = await context.newCDPSession(page);
    await page.waitForTimeout(500);
    await cdp.send("HeapProfiler.collectGarbage");
    const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number };

    // Jump to the oldest event (g g), then scroll up and down through older pages.
    await page.getByTestId("transcript").click({ position: { x: 4, y: 4 } });
    await page.evaluate(() => (window.__tasks = []));
    const t0 = Date.now();
    await page.keyboard.press("g");
    await page.keyboard.press("g");
    await page.locator("#event-1").waitFor({ state: "visible", timeout: 30_000 });
    const oldestMs = Date.now() - t0;
    await page.keyboard.press("Shift+G");
    await page.locator("#event-100000").waitFor({ state: "visible", timeout: 30_000 });
    for (let i = 0; i < 40; i++) {
      await page.mouse.wheel(0, -1500);
      await page.waitForTimeout(50);
    }
    const mountedRows = await page.locator("[data-seq]").count();
    const longestTaskMs = Math.max(0, ...(await page.evaluate(() => window.__tasks ?? [])));

    // Live: follow the tail, append at the rate, read when each row appeared.
    await page.keyboard.press("Shift+G");
    await page.waitForTimeout(1_000);
    const committed = new Map<number, number>();
    const { appended } = await appendAtRate(server.db, runId, opts.rate, opts.seconds, (seq, at) => committed.set(seq, at));
    for (let waited = 0; waited < 10_000; waited += 200) {
      const shown = await page.evaluate((last) => window.__seen?.[last] !== undefined, Math.max(...committed.keys()));
      if (shown) break;
      await page.waitForTimeout(200);
    }
    await page.waitForTimeout(500);
    const seen = await page.evaluate(() => window.__seen ?? {});
    const latencies: number[] = [];
    for (const [seq, at] of committed) {
      const shown = seen[seq];
      if (shown !== undefined) latencies.push(Math.max(0, shown - at));
    }
    return {
      firstPaintWarmMs,
      ttfbMs: timing.ttfb,
      domContentLoadedMs: timing.dcl,
      interactiveMs: timing.interactive,
      firstPaintMs,
      oldestMs,
      heapMb: heap.usedSize / 1024 / 1024,
      mountedRows,
      longestTaskMs,
      live: { appended, seen: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    };
  } finally {
    await browser.close();
  }
}
