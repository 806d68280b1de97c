import { describe, expect, it } from "vitest";

// Rate limits that hold across processes: sign-in (better-auth, database storage) and tRPC
// mutations (rate-limiter-flexible on PostgreSQL). Two limiter instances stand for two web
// processes: they share nothing but the database. The settings are read once, at import.
process.env.AIRLOCK_RATE_LIMIT = "on";
process.env.AIRLOCK_MUTATION_RATE_LIMIT = "3";
const { createAuth } = await import("./index");
const { getDb } = await import("@/server/db");
const { createMutationLimiter } = await import("@/server/http/rate-limit");
const { createTRPCContext } = await import("@/server/trpc/init");
const { createCaller } = await import("@/server/trpc/root");
const { createUser, TEST_PASSWORD } = await import("@/server/testing/factories");
const { POST: trpcPost } = await import("@/app/api/trpc/[trpc]/route");
const { CLIENT_IP_HEADER } = await import("@/server/web/client-ip");

const base = "http://localhost:3000";
const processAuth = () =>
  createAuth({ db: getDb(), secret: "test-secret-not-for-production-0123456789", baseURL: base, github: null, admission: { emailSignUp: false, org: null, team: null }, rateLimit: true, secureCookies: false });

const signInFrom = (auth: ReturnType<typeof processAuth>, ip: string, email: string, password: string, spoofed?: string) =>
  auth.handler(
    new Request(`${base}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: base, [CLIENT_IP_HEADER]: ip, ...(spoofed ? { "x-forwarded-for": spoofed } : {}) },
      body: JSON.stringify({ email, password }),
    }),
  );

describe("sign-in rate limit", () => {
  it("counts attempts from one address across two processes: the fourth in 10 s is 429, another address is not limited", async () => {
    const user = await createUser();
    const [a, b] = [processAuth(), processAuth()];
    const ip = "203.0.113.7";
    const statuses = [];
    for (const [i, auth] of [a, b, a, b].entries()) statuses.push((await signInFrom(auth, ip, user.email, "wrong-password", `198.51.100.${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const limited = await signInFrom(a, ip, user.email, TEST_PASSWORD);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("x-retry-after"))).toBeGreaterThan(0);
    expect((await signInFrom(b, "203.0.113.8", user.email, TEST_PASSWORD)).status).toBe(200);
    expect(await getDb().rateLimit.count({ where: { key: { contains: ip } } })).toBeGreaterThan(0);
  });
});

describe("mutation rate limit", () => {
  it("an account's mutations are counted across processes; queries are not; another account is not limited", async () => {
    const [user, other] = [await createUser(), await createUser()];
    const [p1, p2] = [createMutationLimiter(getDb(), 3), createMutationLimiter(getDb(), 3)];
    const as = (u: typeof user, limit: typeof p1) => createCaller(createTRPCContext({ user: u, mutationLimit: limit }));
    const mark = (limit: typeof p1) => as(user, limit).notifications.markAllRead({});
    await mark(p1);
    await mark(p2);
    await as(user, p1).notifications.unreadCount();
    await mark(p1);
    await expect(mark(p2)).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS", message: expect.stringMatching(/try again in \d+ s/) });
    await expect(as(other, p2).notifications.markAllRead({})).resolves.toBeDefined();
  });

  it("through the route, a signed-out caller is limited by address and told when to retry", async () => {
    const call = (ip: string) =>
      trpcPost(
        new Request(`${base}/api/trpc/invitation.accept`, {
          method: "POST",
          headers: { host: "localhost:3000", origin: base, "content-type": "application/json", [CLIENT_IP_HEADER]: ip },
          body: JSON.stringify({ json: { token: "B".repeat(43), name: "Guess", password: "guess-password" } }),
        }),
      );
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call("192.0.2.55")).status);
    expect(statuses).toEqual([404, 404, 404, 429]);
    const limited = await call("192.0.2.55");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await call("192.0.2.56")).status).toBe(404);
  });
});
