import { expect, signIn, signInWithPassword, test } from "./fixtures";

// Accounts by invitation, in the browser: nobody signs themselves up; an admin invites a person
// by a one-time link with a role; the person makes their account from the link and lands in the
// console; the link then works no more; an account with no role sees its own profile only.

test("sign-up is refused; an invitation link makes one account with its role; a no-role account sees no configuration", async ({ page, baseURL, browser }) => {
  test.setTimeout(90_000);
  const stranger = await page.request.post(`${baseURL}/api/auth/sign-up/email`, {
    data: { email: "e2e-stranger@example.test", password: "stranger-password", name: "Stranger" },
    headers: { origin: baseURL! },
  });
  expect(stranger.status()).toBeGreaterThanOrEqual(400);
  expect(stranger.status()).toBeLessThan(500);

  await signIn(page, baseURL!, "user_admin");
  await page.goto("/settings");
  await page.getByRole("link", { name: "People and invitations" }).click();
  await expect(page.getByRole("heading", { name: "People" })).toBeVisible();
  const email = `e2e-invitee-${Date.now()}@example.test`;
  const invite = page.getByRole("form", { name: "Invite by link" });
  await invite.getByLabel("Email").fill(email);
  await invite.getByLabel("Role on demo/calculator").selectOption("viewer");
  await invite.getByRole("button", { name: "Make the invitation link" }).click();
  const link = await page.getByLabel("Invitation link").inputValue();
  expect(link).toMatch(new RegExp(`^${baseURL}/invite/[A-Za-z0-9_-]{43}$`));
  await expect(page.getByRole("table", { name: "Invitations" }).getByRole("row").filter({ hasText: email })).toContainText("open");

  // The invitee, in a browser of their own.
  const theirs = await browser.newContext({ baseURL });
  const invitee = await theirs.newPage();
  await invitee.goto(link);
  await expect(invitee.getByText(email, { exact: true })).toBeVisible();
  await invitee.getByLabel("Your name").fill("E2E Invitee");
  await invitee.getByLabel("Choose a password").fill("invitee-password");
  await invitee.getByRole("button", { name: `Make the account for ${email}` }).click();
  await expect(invitee).toHaveURL(/\/runs$/, { timeout: 30_000 });
  await invitee.goto(link);
  await expect(invitee.getByText("This invitation was already used.")).toBeVisible();
  await theirs.close();

  await page.reload();
  const row = page.getByRole("table", { name: "Accounts" }).getByRole("row").filter({ hasText: email });
  await expect(row).toContainText("invitation");
  await expect(row).toContainText("demo/calculator");

  // An account with no role: created by the admin, it signs in and reads no shared configuration.
  const lone = `e2e-norole-${Date.now()}@example.test`;
  await page.getByRole("button", { name: "Create an account" }).click();
  const create = page.getByRole("form", { name: "Create an account" });
  await create.getByLabel("Email").fill(lone);
  await create.getByLabel("Name").fill("No Role");
  await create.getByLabel("First password").fill("no-role-password");
  await create.getByRole("button", { name: "Create the account" }).click();
  await expect(page.getByRole("table", { name: "Accounts" }).getByRole("row").filter({ hasText: lone })).toContainText("created by an admin");
  const loneContext = await browser.newContext({ baseURL });
  const lonePage = await loneContext.newPage();
  await signInWithPassword(lonePage, baseURL!, lone, "no-role-password");
  await lonePage.goto("/stacks");
  await expect(lonePage.getByText("You have no role on any repository yet").first()).toBeVisible();
  await lonePage.goto("/settings");
  await expect(lonePage.getByText("You have no role on any repository yet")).toBeVisible();
  await loneContext.close();
});
