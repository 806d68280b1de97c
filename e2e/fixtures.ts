import { expect, test, type Cookie, type Page } from "@playwright/test";
import logins from "../prisma/seed/demo-logins.json" with { type: "json" };

export const demoPassword = process.env.AIRLOCK_DEMO_PASSWORD ?? logins.defaultPassword;

export const demoUser = (id: "user_admin" | "user_maintainer" | "user_viewer") => {
  const u = logins.users.find((x) => x.id === id);
  if (!u) throw new Error(`no demo user ${id}`);
  return u;
};

// better-auth limits sign-ins per client address (a few per 10 s), and every spec signs in
// from 127.0.0.1: sign each demo user in once per server through the API and reuse the session
// cookie (specs run in one worker process, so this map lives across spec files).
const sessions = new Map<string, Cookie[]>();

/** Signs in through the API as any account, waiting out the sign-in rate limit (429) a few times. */
export async function signInWithPassword(page: Page, baseURL: string, email: string, password: string) {
  for (let attempt = 0; ; attempt++) {
    const res = await page.request.post(`${baseURL}/api/auth/sign-in/email`, { data: { email, password }, headers: { origin: baseURL } });
    if (res.status() === 429 && attempt < 3) {
      // The limiter says when the window reopens.
      const wait = Number(res.headers()["x-retry-after"] ?? 10);
      await page.waitForTimeout((Number.isFinite(wait) ? wait : 10) * 1000 + 250);
      continue;
    }
    expect(res.ok(), `sign-in as ${email}: ${res.status()} ${await res.text()}`).toBeTruthy();
    return;
  }
}

/** Signs in through the API (no UI), leaving the session cookie in the page's context. */
export async function signIn(page: Page, baseURL: string, id: Parameters<typeof demoUser>[0]) {
  const key = `${baseURL} ${id}`;
  let cookies = sessions.get(key);
  if (!cookies) {
    await signInWithPassword(page, baseURL, demoUser(id).email, demoPassword);
    cookies = await page.context().cookies(baseURL);
    sessions.set(key, cookies);
  }
  await page.context().clearCookies();
  await page.context().addCookies(cookies);
}

export { expect, test };
