import { describe, expect, it, vi } from "vitest";

// The real route in production mode (the env module is read once per import, so each case
// loads it afresh with its own settings).
async function routeWith(token: string | undefined) {
  vi.resetModules();
  (process.env as Record<string, string>).NODE_ENV = "production";
  if (token) process.env.AIRLOCK_METRICS_TOKEN = token;
  else delete process.env.AIRLOCK_METRICS_TOKEN;
  return (await import("./route")).GET;
}
const scrape = (authorization?: string) => new Request("http://localhost:3000/api/metrics", { headers: authorization ? { authorization } : {} });

describe("GET /api/metrics in production", () => {
  it("refuses a scrape when AIRLOCK_METRICS_TOKEN is unset, and says how to turn metrics on", async () => {
    const GET = await routeWith(undefined);
    const res = await GET(scrape("Bearer guess-guess-guess-guess"));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { message: expect.stringMatching(/set AIRLOCK_METRICS_TOKEN/) } });
  });

  it("with a token: 401 without it or with a wrong one, Prometheus text with it", async () => {
    const token = "metrics-token-for-the-route-test";
    const GET = await routeWith(token);
    const none = await GET(scrape());
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await GET(scrape(`Bearer ${token}-not`))).status).toBe(401);
    const ok = await GET(scrape(`Bearer ${token}`));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^airlock_runs_queued \d+$/m);
  });
});
