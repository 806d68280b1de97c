import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { expect, signIn, test } from "../fixtures";

// The whole loop on the local forge, with the worker running: the demo bootstrap pushes the
// demo repository and runs its check (red), the failure creates a run, the scripted agent
// produces a patch that waits for approval; a maintainer (not the run's triggering actor: the
// bootstrap dispatched it) reviews the diff on /approvals and approves; the worker pushes the
// commit to the bare repository, the check reruns at that commit and goes green, and the run
// page shows the write-back's provenance.

const REPOSITORY = "demo/calculator";

/** The loop server's bare repository for the demo, when its data dir is known to the spec. */
function bareRepo(): string | null {
  const dirs = [process.env.E2E_LOOP_DATA_DIR, process.env.AIRLOCK_DATA_DIR, "test-results/loop-data", "test-results/loop/.airlock"].filter((d): d is string => Boolean(d));
  for (const d of dirs) {
    const path = resolve(d, "forge", "demo", "calculator.git");
    if (existsSync(resolve(path, "HEAD"))) return path;
  }
  return null;
}

test.describe("approval loop", () => {
  test.setTimeout(240_000);

  test("a failing check, a run, a patch awaiting approval, approve, the commit lands and the check goes green", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_maintainer");

    // The bootstrap's failed check becomes a run whose patch waits here (the queue updates live).
    await page.goto("/approvals");
    await expect(page.getByRole("heading", { name: "Approvals" })).toBeVisible();
    // Updates arrive over the SSE stream, not by polling.
    await expect(page.getByTestId("approvals-live")).toHaveText("live");
    const row = page.getByRole("row").filter({ hasText: REPOSITORY }).filter({ hasText: "pending" }).filter({ hasText: /push commits|update pr branch/ });
    await expect(row.first()).toBeVisible({ timeout: 180_000 });
    await row.first().getByRole("link", { name: /push commits|update pr branch/ }).click();

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
    const before = bareRepo();
    if (before) expect(execFileSync("git", ["--git-dir", before, "rev-parse", "main"], { encoding: "utf8" }).trim()).toBe(headSha);

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
    const bare = bareRepo();
    if (bare) {
      expect(execFileSync("git", ["--git-dir", bare, "rev-parse", "main"], { encoding: "utf8" }).trim()).toBe(commit);
      expect(execFileSync("git", ["--git-dir", bare, "rev-parse", `${commit}^`], { encoding: "utf8" }).trim()).toBe(headSha);
      const message = execFileSync("git", ["--git-dir", bare, "log", "-1", "--format=%B", commit], { encoding: "utf8" });
      expect(message).toMatch(/Airlock-Run: \S+/);
      expect(message).toMatch(/Airlock-Approval: \S+/);
      expect(message).toMatch(/Airlock-Write-Back: wb_[0-9a-f]+/);
      expect(execFileSync("git", ["--git-dir", bare, "show", `${commit}:src/sum.ts`], { encoding: "utf8" })).toContain("i < values.length; i++");
    }

    // The run page: the write-back's provenance, and the check rerun at the commit, green.
    await page.getByRole("link", { name: /^#\d+/ }).first().click();
    await expect(page).toHaveURL(/\/runs\/[a-z0-9]+$/);
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
