import { describe, expect, it } from "vitest";
import { GET } from "@/app/api/health/route";
import { freePort } from "@/scripts/lib/postgres.mjs";
import { checkHealth } from "./health";

describe("health", () => {
  it("reports the database reachable and every migration applied", async () => {
    const h = await checkHealth(process.env.DATABASE_URL);
    expect(h).toMatchObject({ status: "ok", database: { reachable: true }, migrations: { pending: [] } });
    expect(h.migrations?.applied).toBeGreaterThan(0);
    const res = await GET();
    expect(res.status).toBe(200);
  });

  it("says down when the database is unreachable (the route maps that to 503), without leaking the URL", async () => {
    const port = await freePort(); // nothing listens there
    const h = await checkHealth(`postgresql://user:hunter2@127.0.0.1:${port}/nope`, 1000);
    expect(h.status).toBe("down");
    expect(h.database.reachable).toBe(false);
    expect(JSON.stringify(h)).not.toContain("hunter2");
  });
});
