import { expect, test, type Page } from "@playwright/test";
import logins from "../prisma/seed/demo-logins.json" with { type: "json" };

export const demoPassword = process.env.AIRLOCK_DEMO_PASSWORD ?? logins.defaultPassword;

export const demoUser = (id: "user_admin" | "user_maintainer" | "user_viewer") => {
  const u = logins.users.find((x) => x.id === id);
  if (!u) throw new Error(`no demo user ${id}`);
  return u;
};

/** Signs in through the API (no UI), leaving the session cookie in the page's context. */
export async function signIn(page: Page, baseURL: string, id: Parameters<typeof demoUser>[0]) {
  const res = await page.request.post(`${baseURL}/api/auth/sign-in/email`, {
    data: { email: demoUser(id).email, password: demoPassword },
    headers: { origin: baseURL },
  });
  expect(res.ok(), `sign-in as ${id}: ${res.status()} ${await res.text()}`).toBeTruthy();
}

export { expect, test };
