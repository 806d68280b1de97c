import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, signIn, test } from "./fixtures";

// API tokens end to end: made in Settings, shown once, used by the REST API and the CLI against
// the real server, revoked, refused. The reference and the OpenAPI document are served.

const run = promisify(execFile);

test("a token made in Settings works on REST and the CLI until it is revoked", async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  await signIn(page, baseURL!, "user_maintainer");
  await page.goto("/settings");
  await page.getByRole("link", { name: "API tokens" }).click();
  await expect(page.getByRole("heading", { name: "API tokens" })).toBeVisible();

  const form = page.getByRole("form", { name: "New token" });
  const name = `e2e-${Date.now()}`;
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Role").selectOption("viewer");
  await form.getByLabel("demo/calculator").check();
  await form.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("new-token").textContent())!;
  expect(token).toMatch(/^airlock_[A-Za-z0-9_-]{43}$/);
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  const row = page.getByRole("table", { name: "Tokens" }).getByRole("row").filter({ hasText: name });
  await expect(row).toContainText("never");
  // Shown once: the page never has it again.
  await page.reload();
  expect(await page.content()).not.toContain(token);

  const auth = { authorization: `Bearer ${token}` };
  const who = await page.request.get(`${baseURL}/api/v1/whoami`, { headers: auth });
  expect(who.status()).toBe(200);
  expect((await who.json()).token).toMatchObject({ name, role: "viewer" });
  // A session cookie is not a credential here.
  expect((await page.request.get(`${baseURL}/api/v1/runs`)).status()).toBe(401);

  const cli = await run(process.execPath, ["bin/airlock.mjs", "runs", "list", "--limit", "5"], { env: { ...process.env, AIRLOCK_URL: baseURL!, AIRLOCK_TOKEN: token } });
  expect(cli.stdout).toMatch(/#\d+/);

  await page.reload();
  await expect(row).not.toContainText("never");
  await row.getByRole("button", { name: `Revoke ${name}` }).click();
  await expect(row).toContainText("revoked");
  expect((await page.request.get(`${baseURL}/api/v1/runs`, { headers: auth })).status()).toBe(401);
});

test("the REST reference and its OpenAPI document are served", async ({ page, baseURL }) => {
  const doc = await page.request.get(`${baseURL}/api/v1/openapi.json`);
  expect(doc.status()).toBe(200);
  expect((await doc.json()).openapi).toBe("3.1.0");
  await page.goto("/api/v1/reference");
  await expect(page.getByRole("heading", { name: "Airlock REST API" })).toBeVisible();
  await expect(page.getByText("/api/v1/approvals/{approvalId}/approve")).toBeVisible();
});
