import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { loopDataDir, loopDb } from "../db";
import { expect, signIn, test } from "../fixtures";

// The whole loop on the local forge, with the worker running: the demo bootstrap pushes the
// demo repository and runs its check (red), the failure creates a run, the scripted agent
// produces a patch that waits for approval; a maintainer (not the run's triggering actor: the
// bootstrap dispatched it) reviews the diff on /approvals and approves; the worker pushes the
// commit to the bare repository, the check reruns at that commit and goes green, and the run
// page shows the write-back's provenance.

const REPOSITORY = "demo/calculator";

/** The loop server's bare repository of the demo (its data dir is written by e2e/loop/serve.mjs). */
const bareRepo = () => resolve(loopDataDir(test.info().project.name), "forge", "demo", "calculator.git");
const git = (...args: string[]) => execFileSync("git", ["--git-dir", bareRepo(), ...args], { encoding: "utf8" });

test.describe("approval loop", () => {
  test.setTimeout(240_000);

  test("a failing check, a run, a patch awaiting approval, approve, the commit lands and the check goes green", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_maintainer");

    // The bootstrap's failed check (the local CI's own pipeline, not the seeded history) becomes
    // a run whose patch waits for approval.
    const db = await loopDb(test.info().project.name);
    let runId = "";
    try {
      await expect
        .poll(
          async () => {
            const { rows } = await db.query<{ id: string }>(
              `SELECT r."id" FROM "AgentDispatchRun" r JOIN "Repository" repo ON repo."id" = r."repositoryId" JOIN "Pipeline" p ON p."id" = r."pipelineId"
                WHERE repo."fullName" = $1 AND p."externalId" ~ '^local-ci-[0-9]+-[0-9a-z]+$' AND p."conclusion" = 'failure'
                  -- the scripted demo agent's run (other rules may add runs for the same failure)
                  AND r."stackSnapshot" #>> '{spec,adapter,kind}' = 'scripted'
                ORDER BY r."createdAt" LIMIT 1`,
              [REPOSITORY],
            );
            runId = rows[0]?.id ?? "";
            return runId;
          },
          { timeout: 150_000, intervals: [1_000] },
        )
        .not.toBe("");
    } finally {
      await db.end();
    }

    // The queue shows the request as soon as it is made (live over SSE, no reload).
    await page.goto("/approvals");
    await expect(page.getByRole("heading", { name: "Approvals" })).toBeVisible();
    await expect(page.getByTestId("approvals-live")).toHaveText("live");
    const row = page.getByRole("row").filter({ has: page.locator(`a[href="/runs/${runId}"]`) });
    await expect(row).toContainText("pending", { timeout: 150_000 });
    await expect(row).toContainText(REPOSITORY);
    await row.getByRole("link", { name: /push commits|update pr branch/ }).click();

    // The review screen: the diff, its digest, the target and why approval is needed.
    await expect(page).toHaveURL(/\/approvals\/[a-z0-9]+$/);
    await expect(page.getByRole("heading", { level: 1 })).toContainText(REPOSITORY);
    const artifact = page.getByRole("region", { name: "Artifact" });
    await expect(artifact).toContainText("src/sum.ts");
    await expect(artifact).toContainText("for (let i = 0; i < values.length; i++) {");
    const digest = ((await page.getByTestId("artifact-digest").textContent()) ?? "").match(/sha256:[0-9a-f]{64}/)?.[0];
    expect(digest).toBeTruthy();
    const headSha = ((await page.getByTestId("head-sha").textContent()) ?? "").trim();
    expect(headSha).toMatch(/^[0-9a-f]{40}$/);
    await expect(page.getByRole("region", { name: "Why approval" })).toContainText("Why this needs approval");
    expect(git("rev-parse", "main").trim()).toBe(headSha);

    await page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" }).click();
    await expect(page.getByText("Approved: the write-back is executing")).toBeVisible();

    // The worker executes the write-back: the review screen shows the commit it pushed.
    const writeBack = page.getByRole("region", { name: "Write-back" });
    await expect(writeBack).toContainText("succeeded", { timeout: 60_000 });
    await expect(writeBack).toContainText("maintainer@airlock.local");
    const commit = ((await writeBack.getByText(/^[0-9a-f]{40}$/).textContent()) ?? "").trim();
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(commit).not.toBe(headSha);

    // The branch really has the commit, with its trailers and the patched file.
    expect(git("rev-parse", "main").trim()).toBe(commit);
    expect(git("rev-parse", `${commit}^`).trim()).toBe(headSha);
    const message = git("log", "-1", "--format=%B", commit);
    const approvalId = page.url().split("/").pop() as string;
    expect(message).toMatch(/Airlock-Run: \S+/);
    expect(message).toContain(`Airlock-Approval: ${approvalId}`);
    expect(message).toMatch(/Airlock-Write-Back: wb_[0-9a-f]+/);
    expect(git("show", `${commit}:src/sum.ts`)).toContain("i < values.length; i++");

    // The run page: the write-back's provenance, and the check rerun at the commit, green.
    await page.getByRole("link", { name: /^#\d+/ }).first().click();
    await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
    const provenance = page.getByRole("listitem").filter({ hasText: "approved by maintainer@airlock.local" });
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(commit);
    await expect(provenance).toContainText((digest as string).slice(0, 15));
    await expect(provenance).toContainText(/stack sha256:[0-9a-f]{8}.* context sha256:[0-9a-f]{8}.* prompt sha256:/);
    await expect(async () => {
      await page.reload();
      const rerun = page.getByTestId("check-rerun");
      await expect(rerun).toContainText(commit.slice(0, 12), { timeout: 2_000 });
      await expect(rerun).toContainText("success", { timeout: 2_000 });
    }).toPass({ timeout: 120_000, intervals: [1_000, 2_000, 3_000] });
    await expect(page.getByTestId("run-status")).toContainText(/succeeded/i);
  });
});
