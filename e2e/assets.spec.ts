import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { Page } from "@playwright/test";
import { e2eDb } from "./db";
import { expect, signIn, test } from "./fixtures";

// Every page of the console, found on disk (a new page is covered without editing this file),
// opened in the browser: no response of 400 or more (a missing favicon, icon, chunk or
// prefetch) and no console error or uncaught exception on any of them. Then the icons and the
// manifest the pages link to: present, of the declared type and size, cached long, and the
// long cache never reaches a page or an API answer.

/** Route patterns of app/**\/page.tsx, route groups removed: "/runs/[runId]". */
function pageRoutes(dir = "app"): string[] {
  const routes: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) routes.push(...pageRoutes(path));
    else if (entry.name === "page.tsx") {
      const segments = relative("app", dir).split(sep).filter((s) => s && !/^\(.*\)$/.test(s));
      routes.push(`/${segments.join("/")}`);
    }
  }
  return routes.sort();
}

/** A sample value for each dynamic segment, read from the seeded database. */
async function segmentSamples(): Promise<Record<string, string[]>> {
  const db = await e2eDb();
  try {
    const one = async (sql: string) => {
      const { rows } = await db.query<{ v: string }>(sql);
      if (!rows[0]) throw new Error(`the seed has no row for ${sql}`);
      return rows[0].v;
    };
    const artifact = (await db.query<{ runId: string; id: string }>(`SELECT "runId", "id" FROM "Artifact" ORDER BY "createdAt" LIMIT 1`)).rows[0];
    if (!artifact) throw new Error("the seed has no artifact");
    const kinds = (await db.query<{ kind: string }>(`SELECT "kind"::text AS "kind" FROM "Policy" ORDER BY "kind"`)).rows.map((r) => r.kind);
    return {
      runId: [artifact.runId],
      artifactId: [artifact.id],
      approvalId: [await one(`SELECT "id" AS v FROM "ApprovalRequest" ORDER BY "createdAt" LIMIT 1`)],
      kind: kinds,
      repositoryId: [await one(`SELECT "id" AS v FROM "Repository" ORDER BY "fullName" LIMIT 1`)],
      stackId: [await one(`SELECT "id" AS v FROM "AgentStack" ORDER BY "name" LIMIT 1`)],
      ruleId: [await one(`SELECT "id" AS v FROM "TriggerRule" ORDER BY "name" LIMIT 1`)],
      // Only an invitation token's hash is stored: a well-formed unknown token opens the page's refusal.
      token: ["a".repeat(43)],
    };
  } finally {
    await db.end();
  }
}

/** Each route with its segments filled in; a segment with no sample fails (add one above). */
function urlsFor(route: string, samples: Record<string, string[]>): string[] {
  const match = route.match(/\[(\w+)\]/);
  if (!match?.[1]) return [route];
  const [segment, name] = [match[0], match[1]];
  const values = samples[name];
  if (!values?.length) throw new Error(`no sample for [${name}] in ${route}: add one to segmentSamples()`);
  return values.flatMap((v) => urlsFor(route.replace(segment, encodeURIComponent(v)), samples));
}

/** Records every failed response, console error and page error while `fn` runs. */
async function problemsDuring(page: Page, fn: () => Promise<void>): Promise<string[]> {
  const problems: string[] = [];
  const onResponse = (r: import("@playwright/test").Response) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  };
  const onConsole = (m: import("@playwright/test").ConsoleMessage) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  };
  const onPageError = (e: Error) => problems.push(`page error: ${e.message}`);
  page.on("response", onResponse);
  page.on("console", onConsole);
  page.on("pageerror", onPageError);
  try {
    await fn();
  } finally {
    page.off("response", onResponse);
    page.off("console", onConsole);
    page.off("pageerror", onPageError);
  }
  return problems;
}

async function visit(page: Page, url: string) {
  const res = await page.goto(url, { waitUntil: "load" });
  expect(res?.status(), url).toBeLessThan(400);
  await expect(page.locator("h1").first()).toBeVisible();
  // Client components fetch after hydration; give a late failure the time to show.
  await page.waitForTimeout(500);
}

const LONG_CACHE = "public, max-age=2592000";

test.describe("assets", () => {
  test("no console page answers or requests anything with a 4xx/5xx, or logs an error", async ({ page, baseURL }) => {
    test.setTimeout(180_000);
    const routes = pageRoutes();
    expect(routes).toEqual(expect.arrayContaining(["/runs", "/runs/[runId]", "/sign-in", "/settings/pools"]));
    const samples = await segmentSamples();
    // A catch-all segment ([...missing]) is the console's not-found page: its 404 is the point
    // (e2e/console-conventions.spec.ts opens it).
    const urls = routes.filter((r) => r !== "/" && r !== "/sign-in" && !r.includes("[...")).flatMap((r) => urlsFor(r, samples));

    const signedOut = await problemsDuring(page, () => visit(page, "/sign-in"));
    expect(signedOut, "/sign-in").toEqual([]);

    await signIn(page, baseURL!, "user_admin");
    for (const url of ["/", ...urls]) {
      const problems = await problemsDuring(page, () => visit(page, url));
      expect(problems, url).toEqual([]);
    }
  });

  test("the icons and the manifest the pages link to are served, of their declared type and size, with a long cache", async ({ page, request }) => {
    await page.goto("/sign-in");
    const links = await page
      .locator('head link[rel="icon"], head link[rel="apple-touch-icon"], head link[rel="manifest"]')
      .evaluateAll((els) => els.map((e) => ({ rel: e.getAttribute("rel"), href: e.getAttribute("href"), type: e.getAttribute("type"), sizes: e.getAttribute("sizes") })));
    expect(links.map((l) => `${l.rel} ${l.href}`).sort()).toEqual([
      "apple-touch-icon /apple-touch-icon.png",
      "icon /favicon.ico",
      "icon /icon.svg",
      "manifest /manifest.webmanifest",
    ]);
    await expect(page.locator('head meta[name="theme-color"]')).toHaveAttribute("content", "#4f46e5");

    const manifestRes = await request.get("/manifest.webmanifest");
    expect(manifestRes.status()).toBe(200);
    expect(manifestRes.headers()["content-type"]).toMatch(/^application\/manifest\+json/);
    const manifest = (await manifestRes.json()) as { name: string; start_url: string; icons: { src: string; type: string; sizes: string }[] };
    expect(manifest.name).toBe("Airlock");
    expect(manifest.start_url).toBe("/runs");

    const files = [
      { src: "/favicon.ico", type: "image/x-icon", sizes: "" },
      { src: "/apple-touch-icon.png", type: "image/png", sizes: "180x180" },
      ...manifest.icons,
    ];
    for (const file of [...files, { src: "/manifest.webmanifest", type: "application/manifest+json", sizes: "" }]) {
      const res = await request.get(file.src);
      expect(res.status(), file.src).toBe(200);
      expect(res.headers()["content-type"], file.src).toContain(file.type === "image/x-icon" ? "image/" : file.type);
      expect(res.headers()["cache-control"], file.src).toBe(LONG_CACHE);
      // The security headers of every answer still apply.
      expect(res.headers()["x-content-type-options"], file.src).toBe("nosniff");
      if (file.type === "image/png") {
        // PNG: width and height are the IHDR chunk's first two 32-bit fields.
        const body = await res.body();
        expect(`${body.readUInt32BE(16)}x${body.readUInt32BE(20)}`, file.src).toBe(file.sizes);
      }
      if (file.src === "/favicon.ico") {
        const body = await res.body();
        expect(body.readUInt16LE(2), "ICO type").toBe(1);
        expect(body.readUInt16LE(4), "images in favicon.ico").toBe(3);
      }
    }
  });

  test("the long cache never reaches a page, an API answer or a missing file", async ({ page, baseURL, request }) => {
    await signIn(page, baseURL!, "user_admin");
    // A shared cache must never keep a signed-in page; nor a 404 for a file added later.
    for (const path of ["/runs", "/settings", "/sign-in"]) {
      const res = await page.goto(path);
      expect(res?.headers()["cache-control"] ?? "", path).not.toContain("max-age=2592000");
    }
    for (const path of ["/api/health", "/api/metrics", "/runs.png", "/no-such-icon.png"]) {
      const res = await request.get(path);
      if (res.status() >= 400) expect(res.headers()["cache-control"] ?? "", path).not.toContain("max-age=2592000");
      else expect(res.headers()["cache-control"] ?? "", path).not.toBe(LONG_CACHE);
    }
  });
});
