// The lookups evaluation makes per delivery use an index, not a scan that grows with the table
// (migration 20261207130001). Sequential scans are disabled for the EXPLAIN, so the planner picks
// an index wherever one serves the query, whatever the table's size in the test database.
import { describe, expect, it } from "vitest";
import { getDb } from "@/server/db";

const db = getDb();

async function plan(query: string, ...values: unknown[]): Promise<string> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
    const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${query}`, ...values);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}

describe("evaluation's lookup indexes", () => {
  it("find a pull request by its repository and head commit with an index (a workflow_job names no number)", async () => {
    const text = await plan(`SELECT * FROM "PullRequest" WHERE "repositoryId" = $1 AND "headSha" = $2 AND "state" = 'open' ORDER BY "updatedAt" DESC LIMIT 1`, "repo", "abc");
    expect(text).toContain("PullRequest_repositoryId_headSha_idx");
  });

  it("find a tag's newest pipeline with an index (a release cut from a branch)", async () => {
    const text = await plan(`SELECT "headSha" FROM "Pipeline" WHERE "repositoryId" = $1 AND "headBranch" = $2 ORDER BY "createdAt" DESC LIMIT 1`, "repo", "v1.0.0");
    expect(text).toContain("Pipeline_repositoryId_headBranch_createdAt_idx");
  });

  it("find a repository by its name with the unique index", async () => {
    const text = await plan(`SELECT * FROM "Repository" WHERE "fullName" = $1`, "acme/widgets");
    expect(text).toContain("Repository_fullName_key");
  });
});
