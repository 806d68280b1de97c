import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRun, e2eDb, repositoryOf } from "./db";
import { expect, signIn, test } from "./fixtures";

// The review write-back in a real browser: a maintainer picks "Request changes" and presses
// "Post review" on a run with a diagnosis; the approval screen shows the exact body and the event
// the forge will receive; another person approves; the write-back runs (as the worker's job does,
// against the local forge in a data directory of the spec's own, since no worker runs beside this
// server) and the PR's conversation holds the review once, however often the job runs; the run
// page lists the write-back as succeeded.

const FINDINGS = "Root cause: sum() adds one too many (return a + b + 1).";

/** Executes the approval's write-back on the local forge in `dataDir` (twice: a retried job) and prints the PR's notes. */
function executeTwice(approvalId: string, dataDir: string, fullName: string, prNumber: number): { outcomes: string[]; notes: { kind: string; reviewEvent?: string; body: string }[] } {
  const url = readFileSync("test-results/e2e-database-url", "utf8").trim();
  const script = `
    const { executeWriteBack } = await import("./server/domain/writebacks/execute.ts");
    const { localForgeFor } = await import("./server/domain/approvals/test-fixtures.ts");
    const { listLocalNotes } = await import("./server/forges/local/write-back.ts");
    const { getDb } = await import("./server/db/index.ts");
    const [approvalId, dataDir, fullName, pr] = process.argv.slice(1);
    const outcomes = [];
    for (let i = 0; i < 2; i++) outcomes.push((await executeWriteBack({ db: getDb(), forgeFor: localForgeFor(dataDir), approvalId })).outcome);
    process.stdout.write(JSON.stringify({ outcomes, notes: await listLocalNotes(dataDir, fullName, Number(pr)) }));
    process.exit(0);`;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, approvalId, dataDir, fullName, String(prNumber)], {
    env: { ...process.env, DATABASE_URL: url },
    timeout: 60_000,
  });
  return JSON.parse(out.toString("utf8").trim().split("\n").at(-1) ?? "{}");
}

test("Post review: request changes, shown byte for byte with its event, approved, posted once", async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  const db = await e2eDb();
  const prNumber = 90_000 + Math.floor(Math.random() * 9_000);
  let runId = "";
  let runNumber = 0;
  let digest = "";
  let fullName = "";
  try {
    const repositoryId = await repositoryOf(db, "maintainer@airlock.local", "maintainer");
    fullName = (await db.query<{ fullName: string }>(`SELECT "fullName" FROM "Repository" WHERE "id" = $1`, [repositoryId])).rows[0]!.fullName;
    runId = await createRun(db, { repositoryId, title: "Review write-back e2e", status: "succeeded" });
    const prId = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    await db.query(
      `INSERT INTO "PullRequest" ("id", "repositoryId", "number", "title", "author", "headRef", "headSha", "baseRef") VALUES ($1, $2, $3, 'Fix sum', 'dev', 'e2e/branch', $4, 'main')`,
      [prId, repositoryId, prNumber, "e".repeat(40)],
    );
    runNumber = (await db.query<{ number: number }>(`UPDATE "AgentDispatchRun" SET "pullRequestId" = $2, "origin" = 'repository' WHERE "id" = $1 RETURNING "number"`, [runId, prId])).rows[0]!.number;
    digest = `sha256:${createHash("sha256").update(FINDINGS).digest("hex")}`;
    await db.query(
      `INSERT INTO "Artifact" ("id", "runId", "kind", "name", "content", "mediaType", "digest", "sizeBytes") VALUES ($1, $2, 'diagnosis', 'diagnosis.md', $3, 'text/markdown', $4, $5)`,
      [`e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`, runId, FINDINGS, digest, Buffer.byteLength(FINDINGS)],
    );
  } finally {
    await db.end();
  }
  const expected = [`**Airlock review** (run #${runNumber}): requests changes`, "", FINDINGS, "", `<sub>Written by an agent and posted by Airlock after a maintainer's request · diagnosis ${digest}</sub>`].join("\n");

  await signIn(page, baseURL!, "user_maintainer");
  await page.goto(`/runs/${runId}`);
  const pick = page.getByLabel("Review event");
  await expect(pick).toBeEnabled(); // enabled once hydrated
  await pick.selectOption("request_changes");
  await page.getByRole("button", { name: "Post review" }).click();
  await page.waitForURL(/\/approvals\/[^/]+$/);
  const approvalId = new URL(page.url()).pathname.split("/").at(-1)!;
  expect(await page.getByTestId("posted-body").textContent()).toBe(expected);
  await expect(page.getByTestId("review-event")).toHaveText("REQUEST_CHANGES");
  await expect(page.getByRole("region", { name: "What will be posted" })).toContainText(`${Buffer.byteLength(expected)} bytes (UTF-8)`);

  // Another person approves exactly that.
  await signIn(page, baseURL!, "user_admin");
  await page.goto(`/approvals/${approvalId}`);
  await page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" }).click();
  await expect(page.getByText("Approved: the write-back is executing")).toBeVisible();

  const dataDir = mkdtempSync(join(tmpdir(), "airlock-e2e-review-"));
  try {
    const { outcomes, notes } = executeTwice(approvalId, dataDir, fullName, prNumber);
    expect(outcomes).toEqual(["succeeded", "already_recorded"]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ kind: "review", reviewEvent: "REQUEST_CHANGES" });
    expect(notes[0]!.body.startsWith(`${expected}\n\n<!-- airlock-write-back: wb_`)).toBe(true);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  await page.goto(`/runs/${runId}`);
  const writeBacks = page.getByRole("region", { name: "Write-backs" });
  await expect(writeBacks).toContainText("review");
  await expect(writeBacks).toContainText("succeeded");
  await expect(writeBacks).toContainText("approved by admin@airlock.local");
});
