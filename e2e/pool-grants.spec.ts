import { randomBytes } from "node:crypto";
import { expect, signIn, test } from "./fixtures";

// A secret grant scoped to named runner pools, through the admin's form in a real browser: naming
// an untrusted pool for a privileged secret is explained before anything is sent, and the saved
// grant reaches only the pool it names.

test("an admin grants a privileged secret to one named trusted pool; an untrusted pool is refused with the reason", async ({ page, baseURL }) => {
  await signIn(page, baseURL!, "user_admin");
  const secret = `E2E_DEPLOY_${randomBytes(3).toString("hex").toUpperCase()}`;
  await page.goto("/settings/pools");
  await page.getByRole("button", { name: "Grant a secret" }).click();
  const dialog = page.getByRole("dialog", { name: "Grant a secret" });
  await dialog.getByLabel("Secret name").fill(secret);
  await dialog.getByLabel("Privileged secret").check();
  await dialog.getByRole("checkbox", { name: "Repair", exact: true }).check();
  await dialog.getByLabel("Pools that may receive it").selectOption("named_pools");
  const named = dialog.getByRole("group", { name: "Named runner pools" });
  await named.getByRole("checkbox", { name: "untrusted-sandbox (untrusted)" }).check();
  await dialog.getByRole("button", { name: "Create" }).click();
  await expect(named.getByRole("alert")).toHaveText(/A privileged secret can never be granted to an untrusted pool \(untrusted-sandbox\)/);

  await named.getByRole("checkbox", { name: "untrusted-sandbox (untrusted)" }).uncheck();
  await named.getByRole("checkbox", { name: "trusted-local (trusted)" }).check();
  await dialog.getByRole("button", { name: "Create" }).click();
  await expect(dialog).toBeHidden();
  const row = page.getByRole("table", { name: "Secret grants" }).getByRole("row").filter({ hasText: secret });
  await expect(row).toContainText("trusted-local");
  await expect(row).not.toContainText("untrusted-sandbox");
});
