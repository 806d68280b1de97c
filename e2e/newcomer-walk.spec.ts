import type { Page } from "@playwright/test";
import { e2eDbForSpec } from "./db";
import { demoPassword, demoUser, expect, signInWithPassword, test } from "./fixtures";

// A newcomer's first walk through the seeded demo: sign in with the login `npm start` prints,
// open every page and every seeded object's page, and fail on what a newcomer would trip over:
// an error toast, a 4xx/5xx answer, a console error, or text that says the page did not know
// what to show ("[object Object]", a "?" where a value belongs).

const db = e2eDbForSpec();

function watch(page: Page) {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error on ${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`uncaught on ${page.url()}: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${r.url()} (on ${page.url()})`);
  });
  return problems;
}

async function visit(page: Page, path: string, problems: string[]) {
  // Not "networkidle": run and approval pages hold a live SSE stream open.
  await page.goto(path);
  const main = page.locator("main");
  await expect(main, path).toBeVisible();
  await expect(page.locator('[aria-busy="true"]').first(), `${path} still loading`).toHaveCount(0, { timeout: 10_000 }).catch(() => undefined);
  const text = await main.innerText();
  if (text.includes("[object Object]")) problems.push(`${path} shows "[object Object]"`);
  if (/· \?(\s|$)/.test(text)) problems.push(`${path} shows a "?" where a value belongs`);
  const toasts = await page.locator('[data-sonner-toast][data-type="error"]').allInnerTexts();
  for (const t of toasts) problems.push(`error toast on ${path}: ${t}`);
}

// Not yet proven green: its first full run (about 70 pages) was still going at the wave's
// deadline, so it is parked rather than risk CI; enable it once a run passes (see the #23 report).
test.fixme("a newcomer signs in with the printed demo login and every page and seeded object opens cleanly", async ({ page, baseURL }) => {
  test.setTimeout(300_000);
  const problems = watch(page);
  const admin = demoUser("user_admin");
  await signInWithPassword(page, baseURL!, admin.email, demoPassword);

  const pages = ["/runs", "/approvals", "/stacks", "/triggers", "/policies", "/metrics", "/audit", "/notifications", "/settings", "/settings/pools", "/settings/users"];
  const q = async (sql: string) => (await db().query<{ id: string }>(sql)).rows.map((r) => r.id);
  const runs = await q(`SELECT "id" FROM "AgentDispatchRun" r WHERE EXISTS (SELECT 1 FROM "Membership" m WHERE m."repositoryId" = r."repositoryId") ORDER BY "number"`);
  const approvals = await q(`SELECT a."id" FROM "ApprovalRequest" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE EXISTS (SELECT 1 FROM "Membership" m WHERE m."repositoryId" = r."repositoryId")`);
  const artifacts = (await db().query<{ id: string; runId: string }>(`SELECT a."id", a."runId" FROM "Artifact" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE r."title" NOT LIKE '%e2e%' LIMIT 20`)).rows;
  const stacks = await q(`SELECT "id" FROM "AgentStack"`);
  const rules = await q(`SELECT "id" FROM "TriggerRule" WHERE "name" NOT LIKE 'e2e%'`);
  const repositories = await q(`SELECT "id" FROM "Repository" WHERE "fullName" IN ('demo/calculator', 'acme/payments-api', 'acme/web-console')`);
  expect(runs.length).toBeGreaterThanOrEqual(30);
  expect(repositories).toHaveLength(3);

  for (const path of [
    ...pages,
    ...runs.map((id) => `/runs/${id}`),
    ...approvals.map((id) => `/approvals/${id}`),
    ...artifacts.map((a) => `/runs/${a.runId}/artifacts/${a.id}`),
    ...stacks.map((id) => `/stacks/${id}`),
    ...rules.map((id) => `/triggers/${id}`),
    ...repositories.map((id) => `/settings/repositories/${id}`),
  ]) {
    await visit(page, path, problems);
  }
  expect(problems).toEqual([]);
});
