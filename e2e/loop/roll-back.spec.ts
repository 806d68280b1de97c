import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, signIn, test } from "../fixtures";
import { approveAndWait, DEMO_REPOSITORY as REPOSITORY, demoBareRepo as bareRepo, demoGit as git, demoMainHead as mainHead, loopDbForSpec, postTrpc, provenanceOf, MAINTAINER } from "./demo-forge";

// The roll_back write-back in the browser, with the worker running (issue 19): demo/calculator's
// check becomes its deploy (`sh deploy.sh`), a commit breaks the deploy, and a maintainer presses
// "Run check" on the repository page. The local CI fails, CI triage decides the failed deploy
// rolls back (the repository rolls back by reverting), and the failure's run gets a roll_back
// approval. The approval screen shows the failed deploy, the revert commit's message and the
// revert diff (the very bytes git computes for it); approved, the worker commits the revert on
// main once, and the run page shows the write-back's provenance.
// Under e2e/loop/ so it has its own server and database: its commits change no other spec's forge.

const GOOD_DEPLOY = 'echo "deploy: released to app.example.test"\n';
const BAD_DEPLOY = 'echo "deploy: host new.example.test refused the release" >&2\nexit 1\n';
const SUBJECT = "Deploy to the new host";

/** Commits the deploy script (good), then the change that breaks it, on main of the bare repository. */
function pushBrokenDeploy(): { good: string; bad: string } {
  const work = mkdtempSync(join(tmpdir(), "airlock-e2e-roll-back-"));
  const run = (...args: string[]) => execFileSync("git", ["-C", work, "-c", "user.name=Alex", "-c", "user.email=alex@example.test", ...args], { encoding: "utf8" }).trim();
  try {
    execFileSync("git", ["clone", "--quiet", bareRepo(), work]);
    writeFileSync(join(work, "deploy.sh"), GOOD_DEPLOY);
    run("add", "deploy.sh");
    run("commit", "--quiet", "-m", "Add the deploy script");
    const good = run("rev-parse", "HEAD");
    writeFileSync(join(work, "deploy.sh"), BAD_DEPLOY);
    run("commit", "--quiet", "-am", SUBJECT);
    const bad = run("rev-parse", "HEAD");
    run("push", "--quiet", "origin", "HEAD:refs/heads/main");
    return { good, bad };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const db = loopDbForSpec();

test.describe.configure({ mode: "serial" });
test.describe("roll back on the local forge", () => {
  test.setTimeout(300_000);
  let runId = "";

  test("a failed deploy is triaged as roll back; the screen shows the revert; approved, main has the revert commit once", async ({ page, baseURL }) => {
    await expect.poll(mainHead, { timeout: 180_000, intervals: [1_000] }).not.toBe("");
    const { rows: repo } = await db().query<{ id: string; rollBackMode: string }>(`SELECT "id", "rollBackMode"::text AS "rollBackMode" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY]);
    const repositoryId = repo[0]!.id;
    expect(repo[0]!.rollBackMode).toBe("revert");
    // The repository's check is its deploy from here on (what its admin would set on the settings page).
    await db().query(`UPDATE "Repository" SET "checkCommand" = 'sh deploy.sh' WHERE "id" = $1`, [repositoryId]);
    const { good, bad } = pushBrokenDeploy();
    const revertDiff = execFileSync("git", ["--git-dir", bareRepo(), "diff", "--full-index", bad, good], { encoding: "utf8" });

    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/settings/repositories/${repositoryId}`);
    const pipelineAt = async () => (await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM "Pipeline" WHERE "repositoryId" = $1 AND "headSha" = $2`, [repositoryId, bad])).rows[0]!.n;
    // A click before hydration does nothing: click until the check is queued.
    await expect(async () => {
      if ((await pipelineAt()) === 0) await page.getByRole("button", { name: "Run check" }).click({ timeout: 2_000 });
      await expect.poll(pipelineAt, { timeout: 5_000 }).toBeGreaterThan(0);
    }).toPass({ timeout: 60_000 });

    // Triage decides roll back; the roll-back approval is on the failure's run.
    let approvalId = "";
    await expect
      .poll(
        async () => {
          const { rows } = await db().query<{ id: string; runId: string; disposition: string }>(
            `SELECT a."id", a."runId", t."disposition"::text AS "disposition" FROM "TriageDecision" t JOIN "Pipeline" p ON p."id" = t."pipelineId"
               JOIN "ApprovalRequest" a ON a."runId" = t."runId" AND a."action" = 'roll_back'
              WHERE p."headSha" = $1 AND p."repositoryId" = $2`,
            [bad, repositoryId],
          );
          approvalId = rows[0]?.id ?? "";
          runId = rows[0]?.runId ?? "";
          return rows.map((r) => r.disposition);
        },
        { timeout: 180_000, intervals: [1_000] },
      )
      .toEqual(["roll_back"]);

    await page.goto("/approvals");
    const row = page.getByRole("row").filter({ has: page.locator(`a[href="/runs/${runId}"]`) }).filter({ hasText: "roll back" });
    await expect(row).toContainText("pending", { timeout: 30_000 });
    await row.getByRole("link", { name: /roll back/ }).click();
    await expect(page).toHaveURL(new RegExp(`/approvals/${approvalId}$`));

    // The screen against what the request froze and what git says the revert is.
    const { rows: frozen } = await db().query<{ message: string; mode: string; content: string; digest: string; name: string }>(
      `SELECT a."presented"->>'message' AS "message", a."presented"->'rollBack'->>'mode' AS "mode", art."content", art."digest", art."name"
         FROM "ApprovalRequest" a JOIN "Artifact" art ON art."id" = a."artifactId" WHERE a."id" = $1`,
      [approvalId],
    );
    expect(frozen[0]!.mode).toBe("revert");
    expect(frozen[0]!.content).toBe(revertDiff);
    const shown = page.getByRole("region", { name: "Roll back" });
    await expect(shown).toContainText("Revert the failing deploy's change");
    await expect(shown.getByTestId("roll-back-failing")).toContainText(bad);
    expect(await shown.getByTestId("roll-back-message").textContent()).toBe(frozen[0]!.message);
    expect(frozen[0]!.message.startsWith(`Revert "${SUBJECT}"\n\nThis reverts commit ${bad}`)).toBe(true);
    await expect(shown.getByTestId("artifact-digest")).toHaveText(`${frozen[0]!.name} ${frozen[0]!.digest}`);
    await expect(shown).toContainText("deploy.sh");
    await expect(shown).toContainText("host new.example.test refused the release");
    await expect(page.getByRole("region", { name: "Why approval" })).toContainText("roll_back_needs_a_person");
    expect(mainHead()).toBe(bad);

    const writeBack = await approveAndWait(page);
    const commit = ((await writeBack.getByText(/^[0-9a-f]{40}$/).textContent()) ?? "").trim();

    // The forge: main moved by exactly the revert commit, which restores the good deploy script.
    expect(mainHead()).toBe(commit);
    expect(git("rev-parse", `${commit}^`)).toBe(bad);
    const message = git("log", "-1", "--format=%B", commit);
    expect(message.startsWith(`Revert "${SUBJECT}"`)).toBe(true);
    expect(message).toContain(`Airlock-Approval: ${approvalId}`);
    expect(git("show", `${commit}:deploy.sh`)).toBe(GOOD_DEPLOY.trim());
    const { rows: wbs } = await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM "WriteBack" WHERE "runId" = $1 AND "kind" = 'roll_back'`, [runId]);
    expect(wbs[0]?.n).toBe(1);

    // The run page: the write-back's provenance.
    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^roll back/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
    await expect(provenance).toContainText(commit);
    await expect(provenance).toContainText(frozen[0]!.digest.slice(0, 15));
  });

  test("a viewer sees the roll-back, and the approve procedure refuses them", async ({ page, baseURL }) => {
    expect(runId).not.toBe("");
    const { rows } = await db().query<{ id: string }>(`SELECT "id" FROM "ApprovalRequest" WHERE "runId" = $1 AND "action" = 'roll_back'`, [runId]);
    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/approvals/${rows[0]!.id}`);
    await expect(page.getByRole("region", { name: "Roll back" })).toBeVisible();
    const res = await postTrpc(page, baseURL!, "approvals.approve", { approvalId: rows[0]!.id, artifactDigest: null, headSha: null });
    expect(res.status(), await res.text()).toBe(403);
  });
});
