import type { Page } from "@playwright/test";
import { loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// The fix-forward loop on the local forge, with a real worker, as a maintainer drives it (an
// admin first sets its bound and label names in the repository settings form): a rejected
// patch starts a fix run that carries the reason; its approved patch turns the check green. Then
// a pull request whose fixes keep being rejected stops at the bound and shows the escalation
// digest; its label flip waits at the change gate, the maintainer approves it on the approval
// screen (which shows the labels added and removed) and the local forge's PR flips; re-opening
// for agents flips it back.

type Db = Awaited<ReturnType<typeof loopDb>>;
let db: Db;
test.describe.configure({ mode: "serial" });
test.beforeAll(async ({}, info) => {
  db = await loopDb(info.project.name);
});
test.afterAll(async () => {
  await db?.end();
});

const R1 = "Drop the off-by-one, and say in the commit why the loop starts at 0 (round 1).";
const R2 = "This patch is stale: main moved since (round 2).";
const R3 = "Still not what we need; a person should look (round 3).";

async function pendingPatchRun(where: string, params: unknown[]): Promise<string> {
  let id: string | undefined;
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ id: string }>(
          `SELECT r."id" FROM "AgentDispatchRun" r JOIN "ApprovalRequest" a ON a."runId" = r."id"
            WHERE r."status" = 'awaiting_approval' AND a."status" = 'pending' AND a."action" IN ('push_commits', 'update_pr_branch') AND ${where}
            ORDER BY r."createdAt" LIMIT 1`,
          params,
        );
        id = rows[0]?.id;
        return id ?? "none";
      },
      { timeout: 150_000, intervals: [1_000] },
    )
    .not.toBe("none");
  return id!;
}

async function rejectOnRunPage(page: Page, runId: string, reason: string) {
  await page.goto(`/runs/${runId}`);
  const approvals = page.getByRole("region", { name: "Approvals" });
  await approvals.getByRole("button", { name: "Reject" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Reason (required)").fill(reason);
  await dialog.getByRole("button", { name: "Reject" }).click();
  await expect(approvals.getByText(reason)).toBeVisible();
}

test("a rejected patch starts a fix run carrying the reason; its approved patch turns the check green", async ({ page, baseURL }) => {
  test.setTimeout(300_000);
  const demo = await pendingPatchRun(`r."repositoryId" = (SELECT "id" FROM "Repository" WHERE "fullName" = 'demo/calculator') AND r."parentRunId" IS NULL`, []);
  // An admin sets the loop's bound and its label names in the repository settings form.
  await signIn(page, baseURL!, "user_admin");
  const { rows: repoRows } = await db.query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = 'demo/calculator'`);
  await page.goto(`/settings/repositories/${repoRows[0]!.id}`);
  const policy = page.getByRole("form", { name: "Repository policy" });
  await policy.getByLabel("Max fix attempts").fill("2");
  await policy.getByLabel("Ready-for-human label").fill("ready-for-agent");
  await policy.getByRole("button", { name: "Save policy" }).click();
  await expect(policy.getByText("Must differ from the ready-for-agent label")).toBeVisible();
  await policy.getByLabel("Ready-for-human label").fill("needs-a-person");
  await policy.getByRole("button", { name: "Save policy" }).click();
  await expect(page.getByText(/Saved the settings \(v\d+\)/)).toBeVisible();
  const { rows: saved } = await db.query<{ maxFixAttempts: number; humanReadyLabel: string; audited: number }>(
    `SELECT r."maxFixAttempts", r."humanReadyLabel", (SELECT count(*)::int FROM "AuditEntry" a WHERE a."objectId" = r."id" AND a."action" = 'repository.settings.update') AS audited
      FROM "Repository" r WHERE r."fullName" = 'demo/calculator'`,
  );
  expect(saved[0]).toEqual({ maxFixAttempts: 2, humanReadyLabel: "needs-a-person", audited: 1 });
  await signIn(page, baseURL!, "user_maintainer");

  await rejectOnRunPage(page, demo, R1);
  const loop = page.getByTestId("fix-loop");
  await expect(loop).toBeVisible({ timeout: 30_000 });
  await expect(loop.getByText(R1)).toBeVisible();
  await expect(loop.getByTestId("fix-loop-attempts")).toHaveText("1 of 2");
  const fixLink = loop.getByRole("link", { name: /^#\d+$/ });
  await expect(fixLink).toBeVisible({ timeout: 30_000 });
  const href = (await fixLink.getAttribute("href"))!;
  const fixRunId = href.split("/").at(-1)!;
  expect(fixRunId).not.toBe(demo);
  await fixLink.click();
  await expect(page).toHaveURL(new RegExp(`/runs/${fixRunId}$`));

  // The fix run's prompt carries the rejection verbatim.
  await page.getByText("Show the assembled prompt").click();
  await expect(page.locator("pre").filter({ hasText: R1 })).toBeVisible();

  // Its patch waits at the gate like any patch; approving pushes to the same branch.
  await pendingPatchRun(`r."id" = $1`, [fixRunId]);
  await page.reload();
  const approvals = page.getByRole("region", { name: "Approvals" });
  await approvals.getByRole("button", { name: "Approve" }).click();
  await expect
    .poll(
      async () => {
        const { rows } = await db.query<{ conclusion: string | null }>(`SELECT "conclusion" FROM "Pipeline" WHERE "triggeredByRunId" = $1 ORDER BY "createdAt" DESC LIMIT 1`, [fixRunId]);
        return rows[0]?.conclusion ?? "none";
      },
      { timeout: 120_000, intervals: [1_000] },
    )
    .toBe("success");
  const { rows: opened } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WriteBack" WHERE "runId" = $1 AND "kind" = 'open_pr'`, [fixRunId]);
  expect(opened[0]?.n).toBe(0);
  await page.reload();
  await expect(page.getByText("Succeeded").first()).toBeVisible();
});

test("a pull request whose fixes keep being rejected stops at the bound, shows the escalation digest and flips its labels once approved", async ({ page, baseURL }) => {
  test.setTimeout(300_000);
  await signIn(page, baseURL!, "user_maintainer");
  const { rows: demoRows } = await db.query<{ id: string; repositoryId: string; headSha: string }>(
    `SELECT r."id", r."repositoryId", r."headSha" FROM "AgentDispatchRun" r JOIN "ApprovalRequest" a ON a."runId" = r."id" WHERE a."reason" = $1`,
    [R1],
  );
  const demo = demoRows[0]!.id;
  // The maintainer retries the rejected demo run: a new attempt, a new patch to judge.
  await page.goto(`/runs/${demo}`);
  await page.getByRole("button", { name: "Retry" }).click();
  await pendingPatchRun(`r."id" = $1`, [demo]);
  // From here the demo run works on a pull request of the local forge (whose PRs are Airlock's
  // records), labelled ready for agents: its fix runs push to it and the escalation flips its labels.
  const { rows: prRows } = await db.query<{ id: string }>(
    `INSERT INTO "PullRequest" ("id", "repositoryId", "number", "title", "author", "headRef", "headSha", "baseRef", "labels", "updatedAt")
      VALUES ('pr_e2e_fix_loop', $1, 1, 'Invoice totals', 'alex', 'main', $2, 'main', ARRAY['ready-for-agent', 'invoices'], now()) RETURNING "id"`,
    [demoRows[0]!.repositoryId, demoRows[0]!.headSha],
  );
  const prId = prRows[0]!.id;
  await db.query(`UPDATE "AgentDispatchRun" SET "pullRequestId" = $1 WHERE "id" = $2`, [prId, demo]);
  const prLabels = async () => (await db.query<{ labels: string[] }>(`SELECT "labels" FROM "PullRequest" WHERE "id" = $1`, [prId])).rows[0]?.labels;
  await rejectOnRunPage(page, demo, R2);

  // The second (last) fix run: rejected again, the loop escalates instead of a third.
  const loop = page.getByTestId("fix-loop");
  await expect(loop.getByTestId("fix-loop-attempts")).toHaveText("2 of 2", { timeout: 30_000 });
  const launchedBy = async (rejection: string) =>
    (await db.query<{ runId: string | null }>(`SELECT "runId" FROM "FixSpawnIntent" WHERE "rejection" = $1`, [rejection])).rows[0]?.runId ?? null;
  await expect.poll(() => launchedBy(R2), { timeout: 30_000 }).not.toBeNull();
  const secondFix = (await launchedBy(R2))!;
  await pendingPatchRun(`r."id" = $1`, [secondFix]);
  await rejectOnRunPage(page, secondFix, R3);

  const escalation = page.getByTestId("fix-loop-escalation");
  await expect(escalation).toBeVisible({ timeout: 60_000 });
  await expect(escalation).toContainText("after 2 of 2 fix runs; a person takes over");
  await expect(escalation).toContainText(R2);
  await expect(escalation).toContainText(R3);
  // This repository's loop only (the demo seed has a fix loop of its own, on another repository).
  const { rows: fixRuns } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "FixSpawnIntent" WHERE "kind" = 'fix' AND "repositoryId" = $1`, [demoRows[0]!.repositoryId]);
  expect(fixRuns[0]?.n).toBe(2);

  // The label flip waits at the change gate: the forge (the PR record) has not changed.
  const { rows: flips } = await db.query<{ id: string }>(`SELECT "id" FROM "ApprovalRequest" WHERE "action" = 'set_labels' AND "status" = 'pending' AND "targetPrNumber" = 1`);
  expect(flips).toHaveLength(1);
  expect(await prLabels()).toEqual(["ready-for-agent", "invoices"]);
  const flipLine = loop.getByTestId("fix-loop-label-flip");
  await expect(flipLine).toContainText("Labels on #1: ready-for-agent, invoices. Flip (add needs-a-person; remove ready-for-agent): pending");
  await flipLine.getByRole("link", { name: "Review" }).click();
  await expect(page).toHaveURL(new RegExp(`/approvals/${flips[0]!.id}$`));
  const change = page.getByRole("region", { name: "Label change" });
  await expect(change.getByTestId("labels-added")).toHaveText("needs-a-person");
  await expect(change.getByTestId("labels-removed")).toHaveText("ready-for-agent");
  await expect(change.getByText("#1", { exact: true })).toBeVisible();
  await page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" }).click();
  const writeBack = page.getByRole("region", { name: "Write-back" });
  await expect(writeBack.getByText("succeeded")).toBeVisible({ timeout: 60_000 });
  await expect(writeBack.getByText("#1: invoices, needs-a-person")).toBeVisible();
  expect(await prLabels()).toEqual(["invoices", "needs-a-person"]);

  // Only a person brings it back: re-open for agents (audited), the bound starts again, and the
  // labels flip back as that maintainer's own write-back.
  await page.goto(`/runs/${secondFix}`);
  await expect(flipLine).toContainText("Labels on #1: invoices, needs-a-person. Flip (add needs-a-person; remove ready-for-agent): executed");
  await escalation.getByRole("button", { name: "Re-open for agents" }).click();
  await expect(loop.getByText("Re-opened for agents by maintainer@airlock.local")).toBeVisible();
  await expect(loop.getByTestId("fix-loop-attempts")).toHaveText("0 of 2");
  const { rows: audit } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditEntry" WHERE "action" = 'fixloop.reopen'`);
  expect(audit[0]?.n).toBe(1);
  await expect.poll(prLabels, { timeout: 60_000 }).toEqual(["invoices", "ready-for-agent"]);
  const { rows: back } = await db.query<{ approvedBy: string; outcome: string }>(`SELECT "approvedBy", "outcome" FROM "WriteBack" WHERE "kind" = 'set_labels' AND "approvalId" IS NULL`);
  expect(back).toEqual([{ approvedBy: "maintainer@airlock.local", outcome: "succeeded" }]);
});
