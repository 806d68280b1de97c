import { randomBytes } from "node:crypto";
import { createPrismaClient } from "@/server/db";
import { evaluateDelivery } from "@/server/domain/evaluation/evaluate";
import { failedWorkflowJob } from "@/server/domain/ingest/fixtures/deliveries";
import { signBody } from "@/server/domain/ingest/signature";
import { E2E_WEBHOOK_SECRET } from "./metrics-token";
import { readFileSync } from "node:fs";
import { expect, signIn, test } from "./fixtures";

// A new user's first repository: GitHub sends a failure for a repository Airlock does not know;
// the deliveries page shows it ignored and why; an admin registers the repository and
// re-evaluates; exactly one run comes of it, and a second re-evaluation is a duplicate, not a
// second run. A viewer sees neither the unregistered delivery nor the admin actions.
// This project runs no worker: the spec runs the job the worker would (`delivery.evaluate`).

const db = createPrismaClient(readFileSync("test-results/e2e-database-url", "utf8").trim());
test.afterAll(async () => {
  await db.$disconnect();
});

const evaluateQueued = async (deliveryId: string) => {
  const result = await evaluateDelivery({ db, deliveryId });
  return result;
};

test("an unregistered delivery, the repository registered, re-evaluated: exactly one run", async ({ page, baseURL }) => {
  const suffix = randomBytes(3).toString("hex");
  const fullName = `newcomer${suffix}/hello-world`;
  const deliveryId = `e2e-${randomBytes(8).toString("hex")}`;
  const delivery = failedWorkflowJob({ repo: fullName, runId: 900 + Number.parseInt(suffix, 16), jobId: 77, jobName: "test", step: "npm test", headSha: randomBytes(20).toString("hex"), headBranch: "main" });
  const body = JSON.stringify(delivery.payload);
  const res = await page.request.post(`${baseURL}/api/webhooks/github`, {
    headers: { "content-type": "application/json", "x-github-event": delivery.event, "x-github-delivery": deliveryId, "x-hub-signature-256": signBody(E2E_WEBHOOK_SECRET, body) },
    data: body,
  });
  expect(res.status()).toBe(202);
  expect((await evaluateQueued(deliveryId)).outcome).toBe("ignored");

  await signIn(page, baseURL!, "user_admin");
  await page.goto(`/deliveries?repository=${encodeURIComponent(fullName)}`);
  const row = page.locator(`[data-delivery-id="${deliveryId}"]`);
  await expect(row).toContainText("workflow_job.completed");
  await expect(row).toContainText("not registered");
  await expect(row).toContainText(`repository ${fullName} is not registered in Airlock`);
  await expect(row).toContainText("nothing");

  // Register it from Settings.
  await page.goto("/settings");
  const form = page.getByRole("region", { name: "Register a GitHub repository" });
  await form.getByLabel("owner/name").fill(fullName);
  await form.getByRole("button", { name: "Register repository" }).click();
  await expect(page.getByRole("link", { name: fullName })).toBeVisible();

  // Re-evaluate: queued again, then evaluated (as the worker would), one run.
  await page.goto(`/deliveries?repository=${encodeURIComponent(fullName)}`);
  await row.getByRole("button", { name: "Re-evaluate" }).click();
  await expect(row).toContainText("waiting");
  const second = await evaluateQueued(deliveryId);
  expect(second.created).toHaveLength(1);
  await page.reload();
  await expect(row).toContainText("accepted");
  await expect(row.getByRole("link", { name: /^run #\d+$/ })).toHaveCount(1);

  // Again: the dedupe key holds, no second run.
  await row.getByRole("button", { name: "Re-evaluate" }).click();
  await expect(row).toContainText("waiting");
  const third = await evaluateQueued(deliveryId);
  expect(third.created).toHaveLength(0);
  expect(third.outcome).toBe("duplicate");
  await page.reload();
  await expect(row.getByRole("link", { name: /^run #\d+$/ })).toHaveCount(1);
  await expect(row).toContainText("1 drop");
  expect(await db.agentDispatchRun.count({ where: { repository: { fullName } } })).toBe(1);

  // The run links back to its delivery.
  await row.getByRole("link", { name: /^run #\d+$/ }).click();
  await page.getByRole("link", { name: "delivery", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/deliveries\\?delivery=${deliveryId}`));
  await expect(page.locator(`[data-delivery-id="${deliveryId}"]`)).toBeVisible();

  // A viewer: the unregistered-at-the-time delivery's repository is not theirs, so it is not listed;
  // their own deliveries show, without the admin action; the procedure refuses them too.
  await signIn(page, baseURL!, "user_viewer");
  await page.goto(`/deliveries?repository=${encodeURIComponent(fullName)}`);
  await expect(page.getByTestId("deliveries-table")).toContainText("No deliveries match.");
  await page.goto("/deliveries");
  const any = page.getByTestId("deliveries-table").locator("tr").first();
  const button = any.getByRole("button", { name: "Re-evaluate" });
  await expect(button).toHaveAttribute("aria-disabled", "true");
  const refused = await page.request.post(`${baseURL}/api/trpc/deliveries.reevaluate`, { headers: { "content-type": "application/json", origin: baseURL! }, data: { json: { deliveryId } } });
  expect(refused.status()).toBe(403);
  await page.goto("/settings");
  await expect(page.getByRole("region", { name: "Register a GitHub repository" })).toHaveCount(0);
});
