import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { e2eDb } from "./db";
import { expect, signIn, test } from "./fixtures";

// The configuration forms in a real browser against `next start`: a maintainer creates a stack
// (a bad field is refused in the browser first) and a trigger rule (its dry run shows the run it
// would create), then a failing check fires the rule and the run carries that stack's snapshot,
// which a later edit of the stack does not change.
//
// The e2e server runs no worker, so the failing check enters the way local CI sends it
// (ingestCiEvent) and is evaluated the way the worker's "delivery.evaluate" job does
// (evaluateDelivery), from a child process on the e2e database (like e2e/db.ts appends events).

const FIRE = `import { getDb } from "@/server/db";
import { ingestCiEvent } from "@/server/domain/ingest/delivery/ingest-ci-event";
import { evaluateDelivery } from "@/server/domain/ingest/evaluate/evaluate";
const [fullName, cloneUrl, headSha, deliveryId] = process.argv.slice(2) as [string, string, string, string];
const db = getDb();
await ingestCiEvent({
  db,
  deliveryId,
  log: "$ npm test\\n FAIL  test/sum.test.js > sum > adds\\nAssertionError: expected 3 to be 4\\nnpm ERR! Test failed.\\nLocal CI: exit code 1",
  event: {
    type: "failed_check", origin: "local", via: "local_ci", level: "job",
    repository: { fullName, cloneUrl, htmlUrl: null, defaultBranch: "main", visibility: "private" },
    actor: { login: "local-ci", type: "bot", association: null, airlockRole: null },
    headSha, headBranch: "main", triggerEvent: "push", pullRequests: [], isFork: false,
    workflowName: "local-ci", jobName: "test", checkName: "local-ci / test", step: "npm test",
    runId: deliveryId, jobId: deliveryId + "-1", runAttempt: 1, url: null, conclusion: "failure",
    startedAt: null, completedAt: null, runnerLabels: ["local-ci"], runnerName: "local-ci",
  },
});
console.log(JSON.stringify(await evaluateDelivery({ db, deliveryId })));
await db.$disconnect();
`;

function fireFailingCheck(databaseUrl: string, repo: { fullName: string; cloneUrl: string }) {
  const dir = join(process.cwd(), "test-results", "config-forms");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "fire-failing-check.ts");
  writeFileSync(file, FIRE);
  const id = `e2e-config-${randomBytes(4).toString("hex")}`;
  const out = execFileSync(join(process.cwd(), "node_modules/.bin/tsx"), [file, repo.fullName, repo.cloneUrl, randomBytes(20).toString("hex"), id], {
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: "test" },
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { created: { runId: string }[] };
}

/**
 * Serious or critical accessibility problems on the page (unlabelled controls and the like). The
 * toasts are left out: sonner's rich-colour success toast fails colour contrast (app/layout.tsx).
 */
async function axeProblems(page: Page) {
  const results = await new AxeBuilder({ page }).exclude("[data-sonner-toaster]").analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(" | ")}`);
}

test("a maintainer configures a stack and a rule in forms, and a failing check runs that stack's snapshot", async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  const db = await e2eDb();
  try {
    const repo = (await db.query<{ fullName: string; cloneUrl: string }>(`SELECT "fullName", "cloneUrl" FROM "Repository" WHERE "fullName" = 'demo/calculator'`)).rows[0];
    expect(repo, "the seed's demo/calculator").toBeDefined();
    await signIn(page, baseURL!, "user_maintainer");
    const name = `e2e-diagnoser-${randomBytes(3).toString("hex")}`;

    // The stack form: a bad name is refused in the browser, before anything is sent.
    await page.goto("/stacks/new");
    await expect(page.getByRole("heading", { level: 1, name: "New stack" })).toBeVisible();
    await page.getByLabel("Name", { exact: true }).fill("Not A Valid Name");
    await page.getByLabel("Model", { exact: true }).fill("claude-sonnet-4-5");
    await page.getByLabel("Argument 1", { exact: true }).fill("claude");
    await page.getByRole("button", { name: "Create stack" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "Lowercase letters, digits, dot, dash and underscore" })).toBeVisible();
    await expect(page.getByLabel("Name", { exact: true })).toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/stacks\/new$/);

    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByRole("button", { name: "Add tool" }).click();
    await page.getByLabel("Tool 1", { exact: true }).fill("Read");
    await page.getByRole("button", { name: "Create stack" }).click();
    await expect(page).toHaveURL(/\/stacks\/(?!new)[a-z0-9]+$/);
    const stackUrl = page.url();
    await expect(page.getByRole("heading", { level: 1, name })).toBeVisible();
    await expect(page.getByTestId("stack-version")).toHaveText("v1");

    // The live preview assembles the prompt for a recent failure of the repository.
    const preview = page.getByRole("region", { name: "Preview" });
    await preview.getByLabel("Repository").selectOption({ label: "demo/calculator" });
    await expect(preview.getByLabel("Assembled prompt")).toContainText("demo/calculator", { timeout: 15_000 });
    await expect(preview.getByTestId("stack-preview")).toContainText("v1");
    expect(await axeProblems(page), "stack page").toEqual([]);

    // The trigger rule form: a bad failure signature is refused first; the dry run shows the run.
    await page.goto("/triggers/new");
    await page.getByLabel("Name", { exact: true }).fill(`${name}-on-red`);
    await page.getByLabel("Repository").selectOption({ label: "demo/calculator" });
    await page.getByLabel("Stack", { exact: true }).selectOption({ label: `${name} (v1)` });
    await page.getByLabel("Workflow").fill("local-ci");
    await page.getByLabel("Job", { exact: true }).fill("test");
    await page.getByLabel("Failure signature").fill("not-a-signature");
    await page.getByRole("button", { name: "Dry run" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "16 hex characters: copy it from a failed job" })).toBeVisible();
    await page.getByLabel("Failure signature").fill("");
    await page.getByRole("button", { name: "Dry run" }).click();
    const dryRun = page.getByTestId("dry-run-result");
    await expect(dryRun.locator('[data-outcome="create"]').first()).toContainText("would create a run");
    expect(await axeProblems(page), "trigger rule page").toEqual([]);
    await page.getByRole("button", { name: "Create rule" }).click();
    await expect(page).toHaveURL(/\/triggers\/(?!new)[a-z0-9]+$/);
    const ruleId = page.url().split("/").at(-1)!;

    // A failing check fires the rule: the run carries the stack's v1 snapshot.
    const url = readFileSync("test-results/e2e-database-url", "utf8").trim();
    const evaluated = fireFailingCheck(url, repo!);
    const { rows } = await db.query<{ id: string; stackVersion: number; stackDigest: string; status: string }>(
      `SELECT "id", "stackVersion", "stackDigest", "status" FROM "AgentDispatchRun" WHERE "triggerRuleId" = $1`,
      [ruleId],
    );
    expect(rows, JSON.stringify(evaluated)).toHaveLength(1);
    const run = rows[0]!;
    const v1 = (await db.query<{ digest: string }>(`SELECT v."digest" FROM "AgentStackVersion" v JOIN "AgentStack" s ON s."id" = v."stackId" WHERE s."name" = $1 AND v."version" = 1`, [name])).rows[0];
    expect(run).toMatchObject({ stackVersion: 1, stackDigest: v1?.digest, status: "suggested" });

    // Editing the stack afterwards (the guard asks before leaving unsaved edits) leaves the run alone.
    await page.goto(stackUrl);
    await page.getByRole("button", { name: "Add tool" }).click();
    await page.getByLabel("Tool 2", { exact: true }).fill("Grep");
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stacks" }).click();
    await expect(page).toHaveURL(stackUrl);
    await page.getByRole("button", { name: "Save as v2" }).click();
    await expect(page.getByTestId("stack-version")).toHaveText("v2");

    await page.goto(`/runs/${run.id}`);
    await expect(page.getByText(`${name} v1`).first()).toBeVisible();
  } finally {
    await db.end();
  }
});
