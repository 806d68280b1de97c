import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { createHmac, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { checkRunRequestedAction, failedWorkflowJob, installationRepositoriesEvent, type Delivery } from "@/server/domain/ingest/fixtures/deliveries";
import type { GithubDoubleInfo } from "./github-double";
import { E2E_WEBHOOK_SECRET } from "../metrics-token";
import { loopDataDir, loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// A new user's first repositories, against `next start` with a running worker (the worker
// evaluates deliveries, as in production):
// - an admin adds a new local-forge repository from Settings → Repositories: a real bare git
//   repository with its first commit, listed with its forge;
// - GitHub sends a failure for a repository Airlock does not know: the deliveries page shows it
//   ignored and why; the admin registers the repository by its URL ("Add repository"),
//   re-evaluates the delivery, and exactly one run comes of it; again, and it is a duplicate;
// - the admin edits the local repository's trust tier, disables, enables and removes it;
// - a viewer sees no "Add repository" and the procedures refuse them.
// Then with GitHub's part played by the API double (e2e/loop/github-double.ts):
// - the admin enters the GitHub App; an installation_repositories delivery registers a
//   repository; a failed job makes a suggestion, and the worker writes Airlock's check run on
//   the commit with its two requested actions (the job's log read through GitHub's redirect);
// - a check_run.requested_action delivery, signed and posted as the app sends it: from a person
//   GitHub says has only read access, refused with the reason on the deliveries page; from a
//   writer, the suggestion dispatches and the check run follows the run.

/** Serious or critical accessibility problems (sonner's toasts left out, as in config-forms-loop). */
async function axeProblems(page: Page, only: string[] = []) {
  const results = await only.reduce((b, selector) => b.include(selector), new AxeBuilder({ page })).exclude("[data-sonner-toaster]").analyze();
  return results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(" | ")}`);
}

const sign = (body: string, secret = E2E_WEBHOOK_SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

test("an admin adds repositories; an unregistered delivery, registered and re-evaluated, makes exactly one run; a viewer cannot add", async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  const db = await loopDb(test.info().project.name);
  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: string }>(sql, params)).rows[0]?.n ?? 0);
  try {
    const suffix = randomBytes(3).toString("hex");
    await signIn(page, baseURL!, "user_admin");

    // A new local-forge repository.
    const local = `team${suffix}/service`;
    await page.goto("/settings");
    await page.getByRole("link", { name: "Repositories" }).first().click();
    await expect(page).toHaveURL(/\/settings\/repositories$/);
    await expect(page.getByRole("link", { name: "Repositories", exact: true }).and(page.locator("[aria-current=page]"))).toBeVisible();
    await page.getByRole("button", { name: "Add repository" }).click();
    const dialog = page.getByRole("dialog", { name: "Add repository" });
    // No GitHub App is configured on this server: the dialog says how to configure one.
    await expect(dialog).toContainText("No GitHub App is configured");
    await expect(dialog.getByRole("link", { name: "Settings → GitHub" })).toHaveAttribute("href", "/settings/github");
    expect(await axeProblems(page)).toEqual([]);
    await dialog.getByRole("tab", { name: "New local repository" }).click();
    expect(await axeProblems(page)).toEqual([]);
    const localForm = dialog.getByRole("form", { name: "Create a local repository" });
    await localForm.getByLabel("owner/name").fill("../escape");
    await localForm.getByRole("button", { name: "Create repository" }).click();
    await expect(localForm.getByRole("alert")).toContainText("not starting with");
    await localForm.getByLabel("owner/name").fill(local);
    await localForm.getByLabel("Check command (optional)").fill("npm test");
    await localForm.getByRole("button", { name: "Create repository" }).dblclick();
    await expect(dialog).toBeHidden();
    const localRow = page.getByTestId("repositories-table").locator(`tr[data-repository="${local}"]`);
    await expect(localRow).toContainText("local");
    await expect(localRow).toContainText("enabled");
    expect(await count(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" = $1 AND "forge" = 'local' AND "checkCommand" = 'npm test'`, [local])).toBe(1);
    const bare = `${loopDataDir(test.info().project.name)}/forge/${local}.git`;
    expect(execFileSync("git", ["--git-dir", bare, "log", "--format=%s", "main"], { encoding: "utf8" }).trim()).toBe("Initial commit");

    // GitHub sends a failure for a repository Airlock does not know.
    const fullName = `newcomer${suffix}/hello-world`;
    const deliveryId = `e2e-${randomBytes(8).toString("hex")}`;
    const delivery = failedWorkflowJob({ repo: fullName, runId: 900 + Number.parseInt(suffix, 16), jobId: 77, jobName: "test", step: "npm test", headSha: randomBytes(20).toString("hex"), headBranch: "main" });
    const body = JSON.stringify(delivery.payload);
    const res = await page.request.post(`${baseURL}/api/webhooks/github`, {
      headers: { "content-type": "application/json", "x-github-event": delivery.event, "x-github-delivery": deliveryId, "x-hub-signature-256": sign(body) },
      data: body,
    });
    expect(res.status()).toBe(202);
    const row = page.locator(`[data-delivery-id="${deliveryId}"]`);
    await expect(async () => {
      await page.goto(`/deliveries?repository=${encodeURIComponent(fullName)}`);
      await expect(row).toContainText("ignored", { timeout: 1000 });
    }).toPass({ timeout: 60_000 });
    await expect(row).toContainText("workflow_job.completed");
    await expect(row).toContainText("not registered");
    await expect(row).toContainText(`repository ${fullName} is not registered in Airlock`);
    await expect(row).toContainText("nothing");

    // The admin registers it by its GitHub URL; a double click registers it once.
    await page.goto("/settings/repositories");
    await page.getByRole("button", { name: "Add repository" }).click();
    await dialog.getByRole("tab", { name: "GitHub URL or name" }).click();
    const githubForm = dialog.getByRole("form", { name: "Register a GitHub repository" });
    await githubForm.getByLabel("GitHub URL or owner/name").fill(`https://github.com/${fullName}`);
    await githubForm.getByRole("button", { name: "Register repository" }).dblclick();
    await expect(dialog).toBeHidden();
    const listed = page.getByTestId("repositories-table").locator(`tr[data-repository="${fullName}"]`);
    await expect(listed).toContainText("github");
    // Its last delivery is the one GitHub sent before it was registered.
    await expect(listed).toContainText("workflow_job · ignored");
    expect(await count(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" = $1`, [fullName])).toBe(1);

    // Re-evaluate: the worker evaluates it again, and exactly one run exists.
    await page.goto(`/deliveries?repository=${encodeURIComponent(fullName)}`);
    await row.getByRole("button", { name: "Re-evaluate" }).click();
    await expect(async () => {
      await page.reload();
      await expect(row).toContainText("accepted", { timeout: 1000 });
    }).toPass({ timeout: 60_000 });
    await expect(row.getByRole("link", { name: /^run #\d+$/ })).toHaveCount(1);
    const runs = `SELECT count(*) AS n FROM "AgentDispatchRun" r JOIN "Repository" p ON p."id" = r."repositoryId" WHERE p."fullName" = $1`;
    expect(await count(runs, [fullName])).toBe(1);

    // Again: the dedupe key holds, no second run.
    await row.getByRole("button", { name: "Re-evaluate" }).click();
    await expect(async () => {
      await page.reload();
      await expect(row).toContainText("re-evaluated 2×", { timeout: 1000 });
      await expect(row).not.toContainText("waiting", { timeout: 1000 });
    }).toPass({ timeout: 60_000 });
    await expect(row.getByRole("link", { name: /^run #\d+$/ })).toHaveCount(1);
    expect(await count(runs, [fullName])).toBe(1);

    // The local repository's page: an Airlock admin makes it untrusted, disables and enables it,
    // then removes it (the dialog says what happens; the exact name is typed).
    await page.goto("/settings/repositories");
    await localRow.getByRole("link", { name: local }).click();
    const details = page.getByRole("form", { name: "Repository details form" });
    await details.getByLabel("Trust tier").selectOption("untrusted");
    await details.getByRole("button", { name: "Save details" }).click();
    await expect(page.getByRole("region", { name: "Repository details" })).toContainText("v2");
    expect(await count(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" = $1 AND "trustTier" = 'untrusted'`, [local])).toBe(1);
    expect(await axeProblems(page, ["header", "section[aria-label='Repository details']", "section[aria-label='Repository state']"])).toEqual([]);
    const state = page.getByRole("region", { name: "Repository state" });
    await state.getByLabel("Why disable it").fill("moving it");
    await state.getByRole("button", { name: "Disable" }).click();
    await expect(state).toContainText("by an admin: moving it");
    await state.getByRole("button", { name: "Enable" }).click();
    await expect(state.getByRole("button", { name: "Disable" })).toBeVisible();
    await expect(state).toContainText("Its deliveries are evaluated");
    await state.getByRole("button", { name: "Remove…" }).click();
    const removal = page.getByRole("dialog", { name: `Remove ${local}` });
    await expect(removal.getByRole("list", { name: "What removal does" })).toContainText("Its 0 runs, 0 approvals");
    await expect(removal).toContainText(`forge/${local}.git`);
    await removal.getByLabel("Why remove it").fill("an e2e repository");
    const confirm = removal.getByRole("button", { name: "Remove repository" });
    await removal.getByLabel(`Type ${local} to confirm`).fill(local.toUpperCase());
    await expect(confirm).toBeDisabled();
    await removal.getByLabel(`Type ${local} to confirm`).fill(local);
    await confirm.click();
    await expect(page).toHaveURL(/\/settings\/repositories$/);
    await expect(page.getByTestId("repositories-table").locator(`tr[data-repository="${local}"]`)).toHaveCount(0);
    expect(await count(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" = $1 AND "removedAt" IS NOT NULL AND "disabledAt" IS NOT NULL`, [local])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM "AuditEntry" a JOIN "Repository" r ON r."id" = a."objectId" WHERE r."fullName" = $1 AND a."action" IN ('repository.details.update', 'repository.disable', 'repository.enable', 'repository.remove')`, [local])).toBe(4);
    // Its git data stays.
    expect(execFileSync("git", ["--git-dir", bare, "log", "--format=%s", "main"], { encoding: "utf8" }).trim()).toBe("Initial commit");

    // A viewer: no "Add repository", and the procedures refuse them.
    await signIn(page, baseURL!, "user_viewer");
    await page.goto("/settings/repositories");
    await expect(page.getByTestId("repositories-table")).toBeVisible();
    await expect(page.getByRole("button", { name: "Add repository" })).toHaveCount(0);
    for (const [path, json] of [
      ["repositorySettings.register", { fullName: `${fullName}-viewer` }],
      ["repositorySettings.createLocal", { requestId: crypto.randomUUID(), fullName: `${local}-viewer` }],
    ] as const) {
      const refused = await page.request.post(`${baseURL}/api/trpc/${path}`, { headers: { "content-type": "application/json", origin: baseURL! }, data: { json } });
      expect(refused.status(), path).toBe(403);
    }
    expect(await count(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" LIKE '%-viewer'`, [])).toBe(0);
  } finally {
    await db.end();
  }
});

/** The loop server's GitHub double: its addresses and app (written by e2e/loop/serve.mjs's double). */
function githubDouble(project: string) {
  const info = JSON.parse(readFileSync(`test-results/e2e-loop/${project.replace(/^loop-/, "")}/github-double.json`, "utf8")) as GithubDoubleInfo;
  const control = async <T>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${info.controlUrl}${path}`, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`github double ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return { info, control };
}

/** A check run as the double holds it; `json` is what GitHub's API answers (which leaves the actions out). */
type DoubleCheckRun = { id: number; externalId: string; status: string; conclusion: string | null; actions: { label: string }[]; history: { method: string; status: string }[]; json: Record<string, unknown> };

test("a GitHub App repository: Airlock's check run on a failed check; a click from a reader is refused with its reason, a writer's dispatches the suggestion", async ({ page, baseURL }) => {
  test.setTimeout(240_000);
  const project = test.info().project.name;
  const { info, control } = githubDouble(project);
  const db = await loopDb(project);
  try {
    const suffix = randomBytes(3).toString("hex");
    /** Posted as GitHub posts the app's deliveries: signed with the app's webhook secret. */
    const deliver = async (delivery: Delivery) => {
      const deliveryId = `e2e-${randomBytes(8).toString("hex")}`;
      const body = JSON.stringify(delivery.payload);
      const res = await page.request.post(`${baseURL}/api/webhooks/github`, {
        headers: { "content-type": "application/json", "x-github-event": delivery.event, "x-github-delivery": deliveryId, "x-hub-signature-256": sign(body, info.app.webhookSecret) },
        data: body,
      });
      expect(res.status()).toBe(202);
      return deliveryId;
    };
    const rowOf = (deliveryId: string) => page.locator(`[data-delivery-id="${deliveryId}"]`);
    const waitForRow = async (deliveryId: string, text: string | RegExp, path = `/deliveries?repository=${encodeURIComponent(fullName)}`) =>
      expect(async () => {
        await page.goto(path);
        await expect(rowOf(deliveryId)).toContainText(text, { timeout: 1000 });
      }).toPass({ timeout: 90_000 });

    // An admin enters the existing app; Airlock checks it with GitHub before storing it.
    await signIn(page, baseURL!, "user_admin");
    await page.goto("/settings/github");
    const existing = page.getByRole("region", { name: "Use an existing app" });
    await existing.getByLabel("App id").fill(String(info.app.id));
    await existing.getByLabel("Private key (.pem)").fill(info.app.pem);
    await existing.getByLabel("Webhook secret").fill(info.app.webhookSecret);
    await existing.getByRole("button", { name: "Check with GitHub and save" }).click();
    await expect(page.getByRole("region", { name: "Configured app" })).toContainText(`app ${info.app.id}`);

    // GitHub: the app is installed on a new repository, and says so.
    const owner = `app${suffix}`;
    const fullName = `${owner}/widgets`;
    const { headSha, installationId } = await control<{ headSha: string; installationId: number }>("/repository", { fullName });
    const installed = await deliver(installationRepositoriesEvent({ action: "added", installationId, appId: info.app.id, account: owner, added: [{ id: 880_000_000 + Number.parseInt(suffix, 16), fullName }] }));
    // An installation delivery names no repository: it is on the unfiltered list.
    await waitForRow(installed, `registered ${fullName}`, "/deliveries");
    expect(Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "Repository" WHERE "fullName" = $1 AND "githubInstallationId" = $2`, [fullName, installationId])).rows[0]?.n)).toBe(1);

    // A job fails on the commit; its log is on GitHub's log storage.
    const jobId = 60_000 + Number.parseInt(suffix, 16);
    await control("/job-log", { fullName, jobId, log: " FAIL  src/lib/date.test.ts > formatRelative > formats yesterday\nAssertionError: expected 'today' to be 'yesterday'\n" });
    const failed = await deliver(failedWorkflowJob({ repo: fullName, runId: jobId * 10, jobId, jobName: "unit-tests", step: "Run vitest", headSha, headBranch: "feature/x" }));
    await waitForRow(failed, /run #\d+ suggested/);
    await expect(rowOf(failed)).toContainText(`log of job ${jobId} read from GitHub`);
    const { rows: runs } = await db.query<{ id: string; status: string }>(`SELECT r."id", r."status" FROM "AgentDispatchRun" r JOIN "Repository" p ON p."id" = r."repositoryId" WHERE p."fullName" = $1`, [fullName]);
    expect(runs).toEqual([{ id: expect.any(String), status: "suggested" }]);
    const runId = runs[0]!.id;
    // The download carried no token.
    expect((await control<{ path: string; authorization: string | null }[]>("/downloads")).at(-1)?.authorization).toBeNull();

    // The worker writes Airlock's check run on the commit, offering the two actions.
    let checkRun: DoubleCheckRun | undefined;
    await expect(async () => {
      checkRun = (await control<DoubleCheckRun[]>(`/check-runs?repository=${encodeURIComponent(fullName)}`)).find((c) => c.externalId === runId);
      expect(checkRun).toMatchObject({ status: "completed", conclusion: "action_required" });
    }).toPass({ timeout: 60_000 });
    expect(checkRun!.actions.map((a) => a.label)).toEqual(["Diagnose with agent", "Attempt repair"]);
    expect(checkRun!.json.head_sha).toBe(headSha);

    // A person GitHub says may only read clicks "Diagnose with agent": refused, and the reason shown.
    const reader = `reader${suffix}`;
    await control("/collaborator", { fullName, login: reader, role: "read" });
    const click = (login: string, id: number) => checkRunRequestedAction({ repo: fullName, checkRun: checkRun!.json, identifier: "diagnose", sender: { login, id }, installationId });
    const refused = await deliver(click(reader, 9_100_000 + Number.parseInt(suffix, 16)));
    await waitForRow(refused, "ignored");
    await expect(rowOf(refused)).toContainText("check_run.requested_action");
    await expect(rowOf(refused)).toContainText("GitHub says their role is read, and dispatch needs write access or more");
    expect((await db.query<{ status: string }>(`SELECT "status" FROM "AgentDispatchRun" WHERE "id" = $1`, [runId])).rows[0]?.status).toBe("suggested");

    // A writer's click dispatches the suggestion: the run starts, and the check run follows it.
    const writer = `writer${suffix}`;
    await control("/collaborator", { fullName, login: writer, role: "write" });
    const dispatched = await deliver(click(writer, 9_200_000 + Number.parseInt(suffix, 16)));
    await waitForRow(dispatched, `"Diagnose with agent" by ${writer}`);
    await expect(rowOf(dispatched)).toContainText("GitHub role write on the repository");
    await expect(rowOf(dispatched)).toContainText(/run #\d+ queued/);
    expect((await db.query<{ status: string }>(`SELECT "status" FROM "AgentDispatchRun" WHERE "id" = $1`, [runId])).rows[0]?.status).not.toBe("suggested");
    await expect(async () => {
      const now = (await control<DoubleCheckRun[]>(`/check-runs?repository=${encodeURIComponent(fullName)}`)).find((c) => c.id === checkRun!.id);
      expect(now?.history.map((h) => h.status)).toContain("queued");
      expect(now?.actions).toEqual([]);
    }).toPass({ timeout: 60_000 });
    // One check run for the run, and no second run.
    expect((await control<DoubleCheckRun[]>(`/check-runs?repository=${encodeURIComponent(fullName)}`)).filter((c) => c.externalId === runId)).toHaveLength(1);
    expect(Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "AgentDispatchRun" r JOIN "Repository" p ON p."id" = r."repositoryId" WHERE p."fullName" = $1`, [fullName])).rows[0]?.n)).toBe(1);

  } finally {
    await db.end();
  }
});
