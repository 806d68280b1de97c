import { expect, signIn, test } from "../fixtures";
import { approveAndWait, clickUntil, DEMO_REPOSITORY as REPOSITORY, demoGit as git, loopDbForSpec, MAINTAINER, postTrpc, provenanceOf } from "./demo-forge";

// The rerun and open_pr write-backs in the browser, with the worker running (issue 19): the demo
// bootstrap's failed check makes a run whose patch waits for approval. From that run's page a
// maintainer asks to open a pull request with the patch, and to rerun its check; each approval
// screen shows exactly what will be written (compared with what the request froze, then with what
// the forge holds after), the maintainer approves, the worker executes, and the local forge shows
// it once: a new branch with one commit and one PR record; one new local CI run linked to the run,
// and one check_rerun delivery. The run page shows each write-back's provenance.
// Under e2e/loop/ so it has its own server and database: its PR and reruns change no other
// spec's starting state.

const PR_TITLE = "Fix sum's off-by-one";
// Markup and a mention: the body escapes the one and breaks the other, and the screen shows the result.
const PR_NOTES = "Found by the <demo> check; cc @alex.";

const db = loopDbForSpec();
let run: { id: string; number: number; headSha: string };

/** The scripted demo run of the bootstrap's failed check, once its patch waits for approval. */
async function demoRun() {
  if (run) return run;
  await expect
    .poll(
      async () => {
        const { rows } = await db().query<{ id: string; number: number; headSha: string }>(
          `SELECT r."id", r."number", r."headSha" FROM "AgentDispatchRun" r JOIN "Repository" repo ON repo."id" = r."repositoryId"
             JOIN "Pipeline" p ON p."id" = r."pipelineId"
            WHERE repo."fullName" = $1 AND p."conclusion" = 'failure' AND p."triggeredByRunId" IS NULL
              AND r."stackSnapshot" #>> '{spec,adapter,kind}' = 'scripted' AND r."status" = 'awaiting_approval'
              AND EXISTS (SELECT 1 FROM "Artifact" a WHERE a."runId" = r."id" AND a."kind" = 'patch')
            ORDER BY r."createdAt" LIMIT 1`,
          [REPOSITORY],
        );
        if (rows[0]) run = rows[0];
        return rows[0]?.id ?? "";
      },
      { timeout: 180_000, intervals: [1_000] },
    )
    .not.toBe("");
  return run;
}

test.describe("write-backs on the local forge", () => {
  test.setTimeout(300_000);

  test("open_pr: the screen shows the branch, base, title and body; approved, the forge has one branch and one PR with exactly that", async ({ page, baseURL }) => {
    const { id: runId, number, headSha } = await demoRun();
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    const dialog = page.getByRole("dialog", { name: "Open a pull request with the patch" });
    await clickUntil(page.getByRole("button", { name: "Open a pull request" }), dialog);
    const branch = `airlock/run-${number}`;
    await expect(dialog.getByLabel("New branch")).toHaveValue(branch);
    await dialog.getByLabel(/^Title/).fill(PR_TITLE);
    await dialog.getByLabel(/^Notes added to the body/).fill(PR_NOTES);
    await dialog.getByRole("button", { name: "Ask to open the PR" }).click();
    await page.waitForURL(/\/approvals\/[a-z0-9]+$/, { timeout: 30_000 });
    const approvalId = new URL(page.url()).pathname.split("/").at(-1)!;

    // What the request froze is what the screen shows, field by field and the body byte for byte.
    const { rows: frozen } = await db().query<{ action: string; openPr: { branch: string; base: string; title: string; fromSha: string; body: string } }>(
      `SELECT "action"::text AS "action", "presented"->'openPr' AS "openPr" FROM "ApprovalRequest" WHERE "id" = $1`,
      [approvalId],
    );
    expect(frozen[0]).toMatchObject({ action: "open_pr", openPr: { branch, base: "main", title: PR_TITLE, fromSha: headSha } });
    const body = frozen[0]!.openPr.body;
    expect(body).toContain("Found by the &lt;demo&gt; check");
    expect(body).not.toContain("@alex");
    await expect(page.getByTestId("open-pr-branch")).toHaveText(branch);
    await expect(page.getByTestId("open-pr-base")).toHaveText("main");
    await expect(page.getByTestId("open-pr-title")).toHaveText(PR_TITLE);
    expect(await page.getByTestId("posted-body").textContent()).toBe(body);
    await expect(page.getByRole("region", { name: "Pull request to open" })).toContainText(headSha);
    const patchRegion = page.getByRole("region", { name: "Artifact" });
    await expect(patchRegion).toContainText("src/sum.ts");
    const digest = ((await patchRegion.getByTestId("artifact-digest").textContent()) ?? "").match(/sha256:[0-9a-f]{64}/)?.[0];
    expect(digest).toBeTruthy();
    // Nothing is written before the approval.
    expect(git("for-each-ref", "--format=%(refname)", `refs/heads/${branch}`).trim()).toBe("");

    const writeBack = await approveAndWait(page);
    await expect(writeBack).toContainText(/#\d+/);

    // The forge: one new branch, one commit on the agent's head carrying the patch and the trailers,
    // and one PR record from it whose body is the shown body plus only the hidden marker line.
    const tip = git("rev-parse", `refs/heads/${branch}`).trim();
    expect(git("rev-parse", `${tip}^`).trim()).toBe(headSha);
    expect(git("rev-list", "--count", `${headSha}..${tip}`).trim()).toBe("1");
    const message = git("log", "-1", "--format=%B", tip);
    expect(message).toContain(`Airlock-Approval: ${approvalId}`);
    expect(git("show", `${tip}:src/sum.ts`)).toContain("i < values.length; i++");
    const { rows: prs } = await db().query<{ number: number; title: string; body: string; baseRef: string; headSha: string; state: string }>(
      `SELECT p."number", p."title", p."body", p."baseRef", p."headSha", p."state"::text AS "state" FROM "PullRequest" p JOIN "Repository" r ON r."id" = p."repositoryId"
        WHERE r."fullName" = $1 AND p."headRef" = $2`,
      [REPOSITORY, branch],
    );
    expect(prs).toHaveLength(1);
    expect(prs[0]).toMatchObject({ title: PR_TITLE, baseRef: "main", headSha: tip, state: "open" });
    expect(prs[0]!.body).toMatch(new RegExp(`^${body.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n\\n<!-- airlock-write-back: wb_[0-9a-f]+ -->$`));
    const { rows: wbs } = await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM "WriteBack" WHERE "runId" = $1 AND "kind" = 'open_pr'`, [runId]);
    expect(wbs[0]?.n).toBe(1);

    // The run page: the write-back's provenance, and no second "Open a pull request".
    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^open pr/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
    await expect(provenance).toContainText(`#${prs[0]!.number}`);
    await expect(provenance).toContainText((digest as string).slice(0, 15));
    await expect(page.getByRole("button", { name: "Open a pull request" })).toBeDisabled();
  });

  test("rerun: the screen shows the check and the commit; approved, one local CI run linked to the run and one check_rerun", async ({ page, baseURL }) => {
    const { id: runId, headSha } = await demoRun();
    const { rows: original } = await db().query<{ checkName: string; n: number }>(
      `SELECT p."checkName", (SELECT count(*)::int FROM "Pipeline" q WHERE q."repositoryId" = p."repositoryId") AS "n"
         FROM "AgentDispatchRun" r JOIN "Pipeline" p ON p."id" = r."pipelineId" WHERE r."id" = $1`,
      [runId],
    );
    const checkName = original[0]!.checkName;
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    await expect(page.getByText("The local CI reruns the whole check: it cannot rerun a single step.")).toBeVisible();
    await expect(async () => {
      await page.getByRole("button", { name: "Rerun check" }).click({ timeout: 2_000 });
      await page.waitForURL(/\/approvals\/[a-z0-9]+$/, { timeout: 3_000 });
    }).toPass({ timeout: 30_000 });
    const approvalId = new URL(page.url()).pathname.split("/").at(-1)!;

    const { rows: frozen } = await db().query<{ action: string; rerun: { checkName: string; scope: string; headSha: string; headBranch: string; summary: string } }>(
      `SELECT "action"::text AS "action", "presented"->'rerun' AS "rerun" FROM "ApprovalRequest" WHERE "id" = $1`,
      [approvalId],
    );
    expect(frozen[0]).toMatchObject({ action: "rerun_workflow", rerun: { checkName, scope: "whole_check", headSha, headBranch: "main" } });
    const plan = page.getByRole("region", { name: "Rerun" });
    await expect(page.getByTestId("rerun-summary")).toHaveText(frozen[0]!.rerun.summary);
    await expect(plan).toContainText(checkName);
    await expect(plan).toContainText("the whole check (the local CI cannot rerun a single step)");
    await expect(plan).toContainText(`${headSha.slice(0, 12)} (main)`);
    // Nothing ran before the approval.
    const reruns = async () => (await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM "Pipeline" WHERE "triggeredByRunId" = $1`, [runId])).rows[0]!.n;
    expect(await reruns()).toBe(0);

    const writeBack = await approveAndWait(page);
    const externalRef = ((await writeBack.getByText(/^local-ci-[0-9]+-[0-9a-z]+$/).textContent()) ?? "").trim();
    expect(externalRef).toMatch(/^local-ci-/);

    // The forge: one new local CI run of the check at the same commit, linked to the run, and
    // the check_rerun event delivered once.
    const { rows: linked } = await db().query<{ externalId: string; headSha: string; checkName: string; event: string; conclusion: string | null }>(
      `SELECT "externalId", "headSha", "checkName", "event", "conclusion"::text AS "conclusion" FROM "Pipeline" WHERE "triggeredByRunId" = $1`,
      [runId],
    );
    expect(linked).toEqual([{ externalId: externalRef, headSha, checkName, event: "rerun", conclusion: "failure" }]);
    const { rows: wbs } = await db().query<{ id: string }>(`SELECT "id" FROM "WriteBack" WHERE "runId" = $1 AND "kind" = 'rerun_workflow'`, [runId]);
    expect(wbs).toHaveLength(1);
    const { rows: deliveries } = await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "deliveryId" = $1`, [`check-rerun-${wbs[0]!.id}`]);
    expect(deliveries[0]?.n).toBe(1);

    // The run page: the write-back's provenance and the rerun it made, with its result.
    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^rerun workflow/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
    await expect(provenance).toContainText(externalRef);
    const rerun = page.getByTestId("check-rerun");
    await expect(rerun).toHaveCount(1);
    await expect(rerun).toContainText(`(${externalRef}) at ${headSha.slice(0, 12)}`);
    await expect(rerun).toContainText("failure");
  });

  test("a viewer cannot ask for either, and the procedures refuse them", async ({ page, baseURL }) => {
    const { id: runId } = await demoRun();
    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/runs/${runId}`);
    await expect(page.getByRole("button", { name: "Rerun check" })).toBeDisabled();
    await expect(page.getByRole("button", { name: "Open a pull request" })).toBeDisabled();
    for (const [procedure, input] of [
      ["writeBacks.requestRerun", { runId, scope: "failed_jobs" }],
      ["writeBacks.requestOpenPr", { runId, branch: "airlock/viewer" }],
    ] as const) {
      const res = await postTrpc(page, baseURL!, procedure, input);
      expect(res.status(), `${procedure}: ${await res.text()}`).toBe(403);
    }
  });
});
