import { describe, expect, it } from "vitest";
import { POST } from "@/app/api/trpc/[trpc]/route";
import { getDb } from "@/server/db";
import { createRepository, createRun } from "@/server/testing/factories";

// The real route handler, in-process: a cross-site form post never reaches a mutation.
describe("tRPC route: mutations are same-origin JSON only", () => {
  it("refuses a cross-site text/plain form post with 403 and changes nothing", async () => {
    const repo = await createRepository();
    const run = await createRun({ repositoryId: repo.id, status: "queued" });
    const res = await POST(
      new Request("http://localhost:3000/api/trpc/runs.cancel", {
        method: "POST",
        headers: { host: "localhost:3000", "content-type": "text/plain", origin: "null", "sec-fetch-site": "cross-site" },
        body: JSON.stringify({ json: { runId: run.id } }),
      }),
    );
    expect(res.status).toBe(403);
    expect((await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
  });

  it("a same-origin JSON call without a session gets UNAUTHORIZED", async () => {
    const res = await POST(
      new Request("http://localhost:3000/api/trpc/runs.cancel", {
        method: "POST",
        headers: { host: "localhost:3000", "content-type": "application/json", origin: "http://localhost:3000" },
        body: JSON.stringify({ json: { runId: "x" } }),
      }),
    );
    expect(res.status).toBe(401);
  });
});
