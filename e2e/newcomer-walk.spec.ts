import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import type { Page } from "@playwright/test";
import { e2eDbForSpec, loopDataDir, loopDb } from "./db";
import { demoPassword, demoUser, expect, signInWithPassword, test } from "./fixtures";

// A newcomer's first walk through the seeded demo: sign in with the login `npm start` prints,
// open every page and every seeded object's page, click each primary action on a seeded object
// (dispatch, cancel, retry, resume, fork, approve, reject, re-open for agents, run check,
// re-evaluate), and fail on what a newcomer would trip over: an error toast, a 4xx/5xx answer, a
// console error, or text that says the page did not know what to show ("[object Object]", a "?"
// where a value belongs). This project's server has no worker: an action's work is queued, and
// the walk checks what the console says and stores, not what a worker later makes of it.
//
// The second walk runs in the newcomer-walk project, on a server that is what `npm start` runs
// (web, worker, the demo bootstrap): it follows every scene of the story panel from its links and
// clicks what a newcomer is told to click (approve the privileged launch, approve the push), then
// checks the result landed: the commit on the local forge's branch, the check rerun green.

const NEWCOMER = "newcomer-walk";
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
  // Skeletons (aria-busy) give way to data; a page that keeps one (a live region) is not waited on.
  await expect(page.locator('[aria-busy="true"]').first()).toHaveCount(0, { timeout: 1_500 }).catch(() => undefined);
  const text = await main.innerText();
  if (text.includes("[object Object]")) problems.push(`${path} shows "[object Object]"`);
  if (/· \?(\s|$)/.test(text)) problems.push(`${path} shows a "?" where a value belongs`);
  const toasts = await page.locator('[data-sonner-toast][data-type="error"]').allInnerTexts();
  for (const t of toasts) problems.push(`error toast on ${path}: ${t}`);
}

async function toastSays(page: Page, text: RegExp | string) {
  await expect(page.locator("[data-sonner-toast]").filter({ hasText: text }).first()).toBeVisible();
}

async function one(sql: string, params: unknown[] = []): Promise<string> {
  const { rows } = await db().query<{ id: string }>(sql, params);
  expect(rows[0], sql).toBeDefined();
  return rows[0]!.id;
}

async function statusOf(runId: string) {
  const { rows } = await db().query<{ status: string }>(`SELECT "status" FROM "AgentDispatchRun" WHERE "id" = $1`, [runId]);
  return rows[0]?.status;
}

const runByTitle = (title: string) => one(`SELECT "id" FROM "AgentDispatchRun" WHERE "title" = $1 ORDER BY "createdAt" LIMIT 1`, [title]);

test("a newcomer signs in with the printed demo login and every page and seeded object opens cleanly", async ({ page, baseURL }) => {
  test.skip(test.info().project.name === NEWCOMER, "the seeded objects' walk runs on the server without a worker");
  test.setTimeout(600_000);
  const problems = watch(page);
  const admin = demoUser("user_admin");
  await signInWithPassword(page, baseURL!, admin.email, demoPassword);

  const pages = ["/runs", "/approvals", "/stacks", "/triggers", "/policies", "/metrics", "/audit", "/notifications", "/deliveries", "/settings", "/settings/pools", "/settings/users"];
  const q = async (sql: string) => (await db().query<{ id: string }>(sql)).rows.map((r) => r.id);
  const seeded = `r."repositoryId" IN (SELECT "id" FROM "Repository" WHERE "fullName" IN ('demo/calculator', 'acme/payments-api', 'acme/web-console')) AND r."title" NOT LIKE '%e2e%'`;
  const runs = await q(`SELECT r."id" FROM "AgentDispatchRun" r WHERE ${seeded} ORDER BY "number"`);
  const approvals = await q(`SELECT a."id" FROM "ApprovalRequest" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE ${seeded}`);
  const artifacts = (await db().query<{ id: string; runId: string }>(`SELECT a."id", a."runId" FROM "Artifact" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE ${seeded} LIMIT 20`)).rows;
  const stacks = await q(`SELECT "id" FROM "AgentStack" WHERE "name" NOT LIKE 'e2e%'`);
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

  // The story panel offers each scene; the escalation scene's links open.
  await visit(page, "/runs", problems);
  const story = page.getByRole("region", { name: "The demo story" });
  await expect(story.locator("[data-scene]")).toHaveCount(7);
  await expect(story.locator('[data-scene="escalation"]').getByRole("link", { name: "Notifications" })).toBeVisible();
  // The inbox is not empty: the fix loop's escalation notified.
  await visit(page, "/notifications", problems);
  await expect(page.locator("main").getByText(/needs a person/).first()).toBeVisible();

  // Dispatch the seeded suggestion, then cancel the run it became.
  const suggested = await runByTitle("Diagnose `npm test` failure on invoice-totals");
  await visit(page, "/runs", problems);
  await page.getByTestId("suggestions").getByRole("listitem").filter({ hasText: "invoice-totals" }).getByRole("button", { name: "Diagnose with agent" }).click();
  await toastSays(page, "Dispatched as a diagnose run");
  await expect.poll(() => statusOf(suggested)).toBe("queued");
  await visit(page, `/runs/${suggested}`, problems);
  const controls = page.getByRole("region", { name: "Run controls" });
  await controls.getByRole("button", { name: "Cancel run" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel run" }).click();
  await toastSays(page, "Run cancelled");
  await expect.poll(() => statusOf(suggested)).toBe("cancelled");

  // Retry a cancelled run; resume and fork a finished one.
  const failed = await runByTitle("Repair unit-tests on PR #412");
  await visit(page, `/runs/${failed}`, problems);
  await controls.getByRole("button", { name: "Retry" }).click();
  await toastSays(page, /Retrying: attempt \d+ is queued/);
  const finished = await runByTitle("Diagnose e2e timeout on PR #229");
  await visit(page, `/runs/${finished}`, problems);
  await controls.getByRole("button", { name: "Resume" }).click();
  await toastSays(page, /Resumed: run #\d+/);
  await visit(page, `/runs/${finished}`, problems);
  await controls.getByRole("button", { name: "Fork" }).click();
  // A fork needs an edit: the prompt, with one more instruction.
  const forkPrompt = page.getByRole("dialog").getByLabel("Prompt");
  await forkPrompt.fill(`${await forkPrompt.inputValue()}\n\nAlso say whether the timeout predates this PR.`);
  await page.getByRole("dialog").getByRole("button", { name: "Fork run" }).click();
  await toastSays(page, /Forked: run #\d+/);

  // Approve the escalation's label flip; reject the pending release.
  const flip = await one(`SELECT "id" FROM "ApprovalRequest" WHERE "action" = 'set_labels' AND "status" = 'pending' ORDER BY "createdAt" LIMIT 1`);
  await visit(page, `/approvals/${flip}`, problems);
  await page.getByRole("button", { name: "Approve", exact: true }).first().click();
  await toastSays(page, /Approved/);
  const release = await one(`SELECT "id" FROM "ApprovalRequest" WHERE "action" = 'publish_release' AND "status" = 'pending' ORDER BY "createdAt" LIMIT 1`);
  await visit(page, `/approvals/${release}`, problems);
  await page.getByRole("button", { name: "Reject", exact: true }).first().click();
  await page.getByRole("dialog").getByLabel("Reason (required)").fill("Not this week: the changelog misses the settings work.");
  await page.getByRole("dialog").getByRole("button", { name: "Reject" }).click();
  await toastSays(page, "Rejected");

  // Re-open the escalated fix loop for agents.
  const author = await one(`SELECT "parentRunId" AS "id" FROM "FixSpawnIntent" WHERE "kind" = 'escalate' ORDER BY "createdAt" LIMIT 1`);
  await visit(page, `/runs/${author}`, problems);
  await page.getByTestId("fix-loop").getByRole("button", { name: "Re-open for agents" }).click();
  await toastSays(page, "Re-opened for agents");

  // Run the calculator's check; re-evaluate a delivery.
  await visit(page, `/settings/repositories/${await one(`SELECT "id" FROM "Repository" WHERE "fullName" = 'demo/calculator'`)}`, problems);
  await page.getByRole("button", { name: "Run check" }).click();
  await toastSays(page, /^(Check queued on|Already queued on) main/);
  await visit(page, "/deliveries", problems);
  await page.getByRole("button", { name: "Re-evaluate" }).first().click();
  await toastSays(page, "Queued for evaluation again");

  for (const t of await page.locator('[data-sonner-toast][data-type="error"]').allInnerTexts()) problems.push(`error toast: ${t}`);
  expect(problems).toEqual([]);
});

test("a newcomer follows every scene of the story panel and what they approve lands in the local forge", async ({ page, baseURL }) => {
  test.skip(test.info().project.name !== NEWCOMER, "needs the worker and the demo bootstrap of the newcomer-walk server");
  test.setTimeout(600_000);
  const live = await loopDb(NEWCOMER);
  const bare = resolve(loopDataDir(NEWCOMER), "forge", "demo", "calculator.git");
  const git = (...args: string[]) => execFileSync("git", ["--git-dir", bare, ...args], { encoding: "utf8" }).trim();
  const problems = watch(page);
  try {
    // The login `npm start` prints: the admin, who sees every repository the story crosses.
    await signInWithPassword(page, baseURL!, demoUser("user_admin").email, demoPassword);
    const story = page.getByRole("region", { name: "The demo story" });
    const scene = (key: string) => story.locator(`[data-scene="${key}"]`);

    // The bootstrap starts the live scenes when the worker starts: wait until each has its
    // records (the panel reads them), as a newcomer who reloads after a minute would.
    // Pipelines the local CI ran on this server (the seed's are named local-ci-<n>).
    const localCiPipelines = `SELECT "id" FROM "Pipeline" WHERE "externalId" ~ '^local-ci-[0-9]+-'`;
    const ready = async () => {
      const { rows } = await live.query<{ ok: boolean }>(`
        SELECT EXISTS (SELECT 1 FROM "ApprovalRequest" WHERE "action" = 'privileged_capability' AND "status" = 'pending')
           AND EXISTS (SELECT 1 FROM "DispatchAttempt" WHERE "exitReason" ILIKE 'cost cap%')
           AND EXISTS (SELECT 1 FROM "TriageDecision" e JOIN "TriageDecision" r ON r."headSha" = e."headSha" AND r."action" = 'rerun_check' WHERE e."disposition" = 'escalate_to_owner' AND e."createdAt" > r."createdAt")
           AND EXISTS (SELECT 1 FROM "ApprovalRequest" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE r."pipelineId" IN (${localCiPipelines}) AND a."action" = 'push_commits' AND a."status" = 'pending') AS ok`);
      return rows[0]?.ok === true;
    };
    await expect.poll(ready, { timeout: 240_000, intervals: [2_000] }).toBe(true);

    await visit(page, "/runs", problems);
    await expect(story.locator("[data-scene]")).toHaveCount(7);
    // Every scene has something behind it, and every link it offers opens cleanly.
    for (const key of ["loop", "fork", "escalation", "attribution", "flaky", "privileged", "cost_cap"]) {
      // Each visit is a fresh page: the panel's story loads again before its links are there.
      await expect(story.locator("[data-scene]")).toHaveCount(7);
      const links = scene(key).getByRole("link");
      await expect(links.first(), `scene ${key} has links`).toBeVisible();
      for (const href of await links.evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""))) await visit(page, href, problems);
      await visit(page, "/runs", problems);
    }
    await expect(scene("flaky")).toContainText("reran it once; it failed the same way");
    await expect(scene("cost_cap")).toContainText("Cost cap reached");

    // The privileged capability: review what will launch, approve, and the fork launches.
    await scene("privileged").getByRole("link", { name: "Review the launch" }).click();
    await expect(page.getByRole("region", { name: "What will launch" })).toContainText("deploy-status");
    const launchId = page.url().split("/").pop()!;
    await page.getByRole("button", { name: "Approve" }).first().click();
    await toastSays(page, /Approved/);
    const launchedRun = async () =>
      (await live.query<{ status: string }>(`SELECT r."status" FROM "AgentDispatchRun" r JOIN "ApprovalRequest" a ON a."runId" = r."id" WHERE a."id" = $1`, [launchId])).rows[0]?.status;
    await expect.poll(launchedRun, { timeout: 120_000 }).toBe("awaiting_approval");
    await expect.poll(async () => (await live.query<{ status: string }>(`SELECT "status" FROM "ApprovalRequest" WHERE "id" = $1`, [launchId])).rows[0]?.status).toBe("executed");

    // The loop: approve the demo run's push; the commit lands on main and the rerun goes green.
    await visit(page, "/runs", problems);
    await scene("loop").getByRole("link", { name: "Approve the push" }).click();
    const headSha = ((await page.getByTestId("head-sha").textContent()) ?? "").trim();
    expect(git("rev-parse", "main")).toBe(headSha);
    await page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" }).click();
    await expect(page.getByText("Approved: the write-back is executing")).toBeVisible();
    const writeBack = page.getByRole("region", { name: "Write-back" });
    await expect(writeBack).toContainText("succeeded", { timeout: 120_000 });
    const commit = ((await writeBack.getByText(/^[0-9a-f]{40}$/).textContent()) ?? "").trim();
    expect(git("rev-parse", "main")).toBe(commit);
    expect(git("rev-parse", `${commit}^`)).toBe(headSha);
    const rerun = async () => (await live.query<{ conclusion: string | null }>(`SELECT "conclusion" FROM "Pipeline" WHERE "headSha" = $1 AND "conclusion" IS NOT NULL`, [commit])).rows[0]?.conclusion;
    await expect.poll(rerun, { timeout: 120_000 }).toBe("success");

    // Nothing the demo started failed for want of the internet, a commit or a command.
    const { rows: failed } = await live.query<{ exitReason: string | null }>(`SELECT a."exitReason" FROM "DispatchAttempt" a JOIN "AgentDispatchRun" r ON r."id" = a."runId" WHERE a."status" = 'failed' AND r."pipelineId" IN (${localCiPipelines})`);
    expect(failed.map((f) => f.exitReason).filter((r) => !/^Cost cap reached/.test(r ?? ""))).toEqual([]);
    expect(problems).toEqual([]);
  } finally {
    await live.end();
  }
});
