import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loopDataDir, loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// Privileged work waits for a person, with the worker running: a run whose stack names a
// privileged MCP server is held at admission with a privileged_capability approval; its screen
// shows everything the attempt will launch with; approving launches exactly that; the scripted
// agent's usage then passes the stack's cost cap, and the run says why it stopped.

type Db = Awaited<ReturnType<typeof loopDb>>;
let db: Db;
test.beforeAll(async ({}, info) => {
  db = await loopDb(info.project.name);
});
test.afterAll(async () => {
  await db?.end();
});

function setUp(project: string): { runId: string; stackName: string } {
  const name = project.replace(/^loop-/, "");
  const out = execFileSync(process.execPath, ["--import", "tsx", "e2e/loop/privileged-launch-setup.ts", resolve(loopDataDir(project), "forge", "demo", "calculator.git")], {
    encoding: "utf8",
    env: { ...process.env, DATABASE_URL: readFileSync(`test-results/e2e-loop/${name}/database-url`, "utf8").trim() },
    timeout: 60_000,
  });
  return JSON.parse(out.trim().split("\n").pop()!);
}

test("a privileged_capability approval shows what will launch, launches on approve, and the run stopped at its cost cap says why", async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  const { runId, stackName } = setUp(test.info().project.name);

  let approvalId = "";
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ id: string }>(`SELECT "id" FROM "ApprovalRequest" WHERE "runId" = $1 AND "action" = 'privileged_capability' AND "status" = 'pending'`, [runId]);
        approvalId = rows[0]?.id ?? "";
        return approvalId;
      },
      { timeout: 60_000, intervals: [500] },
    )
    .not.toBe("");
  const { rows: held } = await db.query<{ status: string }>(`SELECT "status"::text FROM "DispatchAttempt" WHERE "runId" = $1`, [runId]);
  expect(held).toEqual([{ status: "queued" }]);

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/approvals/${approvalId}`);
  const launch = page.getByRole("region", { name: "What will launch" });
  await expect(launch).toContainText("What attempt 1 will launch with");
  for (const text of [
    "Privileged MCP server prod-db",
    "local/scripted · scripted",
    "trusted-readonly",
    "Runtime ServiceAccount",
    "Runner ServiceAccount",
    "e2e-db-password",
    "e2e-db-host",
    "Read, Bash(npm test:*)",
    "prod-db: stdio prod-db-mcp --read-only (privileged)",
    "minimal-patch",
    "reviewer (Reviews the patch for scope; tools Read)",
  ]) {
    await expect(launch).toContainText(text);
  }
  await expect(launch.getByTestId("launch-digest")).toContainText("sha256:");
  // The resolved prompt, and the stack it comes from.
  const agent = page.getByRole("region", { name: "Agent" });
  await expect(agent).toContainText("Diagnose the failing sum test in demo/calculator.");
  await expect(agent).toContainText(stackName);

  await page.getByRole("button", { name: "Approve" }).click();
  // Approving launches exactly that: the held attempt starts, and its agent's usage passes the cap.
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ status: string; exitReason: string | null }>(`SELECT "status"::text, "exitReason" FROM "DispatchAttempt" WHERE "runId" = $1 ORDER BY "number"`, [runId]);
        return rows;
      },
      { timeout: 90_000, intervals: [1_000] },
    )
    .toEqual([{ status: "failed", exitReason: expect.stringMatching(/^Cost cap reached: stopped at \$0\.05\d{2} of the \$0\.0100 cap/) }]);
  const { rows: approval } = await db.query<{ status: string }>(`SELECT "status"::text FROM "ApprovalRequest" WHERE "id" = $1`, [approvalId]);
  expect(approval[0]!.status).toBe("executed");

  // The run says why it stopped, and no automatic retry spent more (the stack allows 2).
  await page.goto(`/runs/${runId}`);
  await expect(page.getByText(/Cost cap reached: stopped at \$0\.05\d{2} of the \$0\.0100 cap/).first()).toBeVisible();
});
