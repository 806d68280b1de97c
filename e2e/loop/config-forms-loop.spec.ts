import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// The configuration forms in a real browser against `next start` with a running worker: a
// maintainer creates a stack (a bad field is refused in the browser first) and a trigger rule (its
// dry run shows the run it would create), then runs the repository's check from its page. The
// local CI runs the demo's real, failing check, the failure goes through ingest and the trigger
// path, the rule fires, and the run carries that stack's snapshot, which a later edit of the
// stack does not change.

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
  test.setTimeout(240_000);
  const db = await loopDb(test.info().project.name);
  try {
    const repo = (await db.query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = 'demo/calculator'`)).rows[0];
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
    // The seeded calculator rule matches the same failures on more keys: one failure, one run, its.
    const dryRun = page.getByTestId("dry-run-result");
    const superseded = dryRun.locator('[data-outcome="superseded"]').first();
    await expect(superseded).toContainText("another rule wins");
    await expect(superseded).toContainText('superseded by rule "calculator-npm-test": it is more specific (3 match keys against 2)');
    // Set to fire alongside it, the rule would make its own run.
    await page.getByLabel("Also fire when a more specific rule matches the same failure").check();
    await page.getByRole("button", { name: "Dry run" }).click();
    await expect(dryRun.locator('[data-outcome="create"]').first()).toContainText("would create a run");
    await expect(dryRun.getByTestId("dry-run-precedence").first()).toContainText("also fires: set to fire alongside");
    expect(await axeProblems(page), "trigger rule page").toEqual([]);
    await page.getByRole("button", { name: "Create rule" }).click();
    await expect(page).toHaveURL(/\/triggers\/(?!new)[a-z0-9]+$/);
    const ruleId = page.url().split("/").at(-1)!;

    // The repository page's "Run check": the worker's local CI runs the demo's check, which
    // fails, and the failure goes through ingest and the trigger rules: the rule fires.
    await page.goto(`/settings/repositories/${repo!.id}`);
    const ci = page.getByRole("region", { name: "Local CI" });
    await expect(ci).toContainText("npm test");
    await ci.getByRole("button", { name: "Run check" }).click();
    await expect(page.getByText(/Check queued on main/)).toBeVisible();
    let run: { id: string; stackVersion: number; stackDigest: string; status: string; externalId: string } | undefined;
    await expect
      .poll(
        async () => {
          const { rows } = await db.query<NonNullable<typeof run>>(
            `SELECT r."id", r."stackVersion", r."stackDigest", r."status", p."externalId" FROM "AgentDispatchRun" r
              JOIN "Pipeline" p ON p."id" = r."pipelineId" WHERE r."triggerRuleId" = $1`,
            [ruleId],
          );
          run = rows[0];
          return rows.length;
        },
        { timeout: 120_000, intervals: [1_000] },
      )
      .toBe(1);
    // A pipeline of the local CI itself (local-ci-<n>-<time>), with the check's real failure.
    expect(run!.externalId).toMatch(/^local-ci-[0-9]+-[0-9a-z]+$/);
    const v1 = (await db.query<{ digest: string }>(`SELECT v."digest" FROM "AgentStackVersion" v JOIN "AgentStack" s ON s."id" = v."stackId" WHERE s."name" = $1 AND v."version" = 1`, [name])).rows[0];
    expect(run).toMatchObject({ stackVersion: 1, stackDigest: v1?.digest, status: "suggested" });
    const audit = await db.query(`SELECT 1 FROM "AuditEntry" WHERE "action" = 'repository.run_check' AND "objectId" = $1`, [repo!.id]);
    expect(audit.rowCount).toBe(1);

    // Editing the stack afterwards (the guard asks before leaving unsaved edits) leaves the run alone.
    await page.goto(stackUrl);
    await page.getByRole("button", { name: "Add tool" }).click();
    await page.getByLabel("Tool 2", { exact: true }).fill("Grep");
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stacks" }).click();
    await expect(page).toHaveURL(stackUrl);
    await page.getByRole("button", { name: "Save as v2" }).click();
    await expect(page.getByTestId("stack-version")).toHaveText("v2");

    await page.goto(`/runs/${run!.id}`);
    await expect(page.getByText(`${name} v1`).first()).toBeVisible();
  } finally {
    await db.end();
  }
});
