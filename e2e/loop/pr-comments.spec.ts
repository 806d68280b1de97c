import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../fixtures";
import { approveAndWait, clickUntil, DEMO_REPOSITORY as REPOSITORY, demoBareRepo, demoGit as git, demoMainHead as mainHead, insertLocalPr, loopDbForSpec, MAINTAINER, postTrpc, provenanceOf } from "./demo-forge";

// The comment and review write-backs in the browser, with the worker running (issue 19): a
// maintainer dispatches a diagnosis on a pull request of the local forge with the scripted demo
// stack (from the repository page); its patch is approved onto the PR's branch and the run
// succeeds with its diagnosis. From the run page the maintainer asks to post the diagnosis as a
// comment, then a review that requests changes; each approval screen shows the body byte for byte
// (the very text the request froze), the maintainer approves, the worker posts it, and the PR's
// conversation on the local forge holds it once, with that body and only the hidden marker line
// after it. The run page shows each write-back's provenance.
// Under e2e/loop/ so it has its own server and database.

const PR_NUMBER = 7;
const PR_BRANCH = "alex/round-totals";
const PR_ID = "pr_e2e_pr_comments";

type Note = { kind: string; key: string; body: string; reviewEvent?: string };
/** The PR's conversation on the local forge (the notes the forge wrote beside the repository). */
function prNotes(): Note[] {
  const dir = join(`${demoBareRepo().replace(/\.git$/, "")}.pr`, String(PR_NUMBER));
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Note);
}

const db = loopDbForSpec();
let runId = "";

/** The text the approval froze for the forge, and the write-back key the approval assigned (once executed). */
async function frozen(approvalId: string) {
  const { rows } = await db().query<{ action: string; message: string; event: string | null; key: string | null }>(
    `SELECT a."action"::text AS "action", a."presented"->>'message' AS "message", a."presented"->'review'->>'event' AS "event", w."idempotencyKey" AS "key"
       FROM "ApprovalRequest" a LEFT JOIN "WriteBack" w ON w."approvalId" = a."id" WHERE a."id" = $1`,
    [approvalId],
  );
  return rows[0]!;
}

const approvalIdOf = (page: Page) => new URL(page.url()).pathname.split("/").at(-1)!;

test.describe.configure({ mode: "serial" });
test.describe("comment and review write-backs on a local pull request", () => {
  test.setTimeout(300_000);

  test("a scripted diagnosis dispatched on the PR succeeds once its patch is approved", async ({ page, baseURL }) => {
    await expect.poll(mainHead, { timeout: 180_000, intervals: [1_000] }).not.toBe("");
    const head = mainHead();
    const repositoryId = await insertLocalPr(db(), { id: PR_ID, number: PR_NUMBER, branch: PR_BRANCH, head, title: "Round the totals" });
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/settings/repositories/${repositoryId}`);
    const dialog = page.getByRole("dialog", { name: "Dispatch a run" });
    await clickUntil(page.getByRole("button", { name: "Dispatch a run" }), dialog);
    await dialog.getByLabel("Run on").selectOption("pull_request");
    await dialog.getByLabel("Pull request number").fill(String(PR_NUMBER));
    await expect(dialog.getByLabel("Task kind")).toHaveValue("diagnose");
    const scripted = ((await dialog.getByLabel("Stack").locator("option", { hasText: "scripted-demo-fixer" }).textContent()) ?? "").trim();
    await dialog.getByLabel("Stack").selectOption({ label: scripted });
    await dialog.getByRole("button", { name: "Dispatch run" }).click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    runId = new URL(page.url()).pathname.split("/").at(-1)!;

    // The scripted agent's patch waits for approval (onto the PR's branch): approved, it lands.
    let patchApproval = "";
    await expect
      .poll(
        async () => {
          const { rows } = await db().query<{ id: string }>(`SELECT "id" FROM "ApprovalRequest" WHERE "runId" = $1 AND "action" = 'update_pr_branch' AND "status" = 'pending'`, [runId]);
          patchApproval = rows[0]?.id ?? "";
          return patchApproval;
        },
        { timeout: 180_000, intervals: [1_000] },
      )
      .not.toBe("");
    await page.goto(`/approvals/${patchApproval}`);
    await approveAndWait(page);
    expect(git("rev-parse", `${git("rev-parse", `refs/heads/${PR_BRANCH}`)}^`)).toBe(head);
    await page.goto(`/runs/${runId}`);
    await expect(async () => {
      await page.reload();
      await expect(page.getByTestId("run-status")).toContainText(/succeeded/i, { timeout: 2_000 });
    }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
    // Nothing was posted on the PR by itself: the repository exempts no comment from approval.
    expect(prNotes()).toEqual([]);
  });

  test("comment: the screen shows the diagnosis comment byte for byte; approved, the PR has it once", async ({ page, baseURL }) => {
    expect(runId).not.toBe("");
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    await expect(async () => {
      await page.getByRole("button", { name: "Post diagnosis as a comment" }).click({ timeout: 2_000 });
      await page.waitForURL(/\/approvals\/[a-z0-9]+$/, { timeout: 3_000 });
    }).toPass({ timeout: 30_000 });
    const approvalId = approvalIdOf(page);
    const asked = await frozen(approvalId);
    expect(asked.action).toBe("comment");
    const { rows: diagnosis } = await db().query<{ content: string; digest: string }>(`SELECT "content", "digest" FROM "Artifact" WHERE "runId" = $1 AND "kind" = 'diagnosis'`, [runId]);
    expect(asked.message).toContain(diagnosis[0]!.digest);
    const body = await page.getByTestId("posted-body").textContent();
    expect(body).toBe(asked.message);
    await expect(page.getByRole("region", { name: "What will be posted" })).toContainText(`On pull request #${PR_NUMBER} of ${REPOSITORY}`);
    await expect(page.getByRole("region", { name: "What will be posted" })).toContainText(`${Buffer.byteLength(asked.message).toLocaleString("en")} bytes (UTF-8)`);
    expect(prNotes()).toEqual([]);

    await approveAndWait(page);
    const { key } = await frozen(approvalId);
    const notes = prNotes();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ kind: "comment", key, body: `${asked.message.trim()}\n\n<!-- airlock-write-back: ${key} -->` });
    // The shown body is the posted body: nothing trimmed away that the approver saw.
    expect(asked.message.trim()).toBe(asked.message);

    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^comment/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
    await expect(provenance).toContainText(diagnosis[0]!.digest.slice(0, 15));
    await expect(page.getByRole("button", { name: "Post diagnosis as a comment" })).toBeDisabled();
  });

  test("review: the screen shows the event and the body; approved, the PR has the review once and its state follows", async ({ page, baseURL }) => {
    expect(runId).not.toBe("");
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/runs/${runId}`);
    const pick = page.getByLabel("Review event");
    await expect(pick).toBeEnabled(); // enabled once hydrated
    await pick.selectOption("request_changes");
    await page.getByRole("button", { name: "Post review" }).click();
    await page.waitForURL(/\/approvals\/[a-z0-9]+$/, { timeout: 30_000 });
    const approvalId = approvalIdOf(page);
    const asked = await frozen(approvalId);
    expect(asked).toMatchObject({ action: "review", event: "REQUEST_CHANGES" });
    expect(await page.getByTestId("posted-body").textContent()).toBe(asked.message);
    await expect(page.getByTestId("review-event")).toHaveText("REQUEST_CHANGES");

    await approveAndWait(page);
    const { key } = await frozen(approvalId);
    const reviews = prNotes().filter((n) => n.kind === "review");
    expect(reviews).toEqual([expect.objectContaining({ key, reviewEvent: "REQUEST_CHANGES", body: `${asked.message}\n\n<!-- airlock-write-back: ${key} -->` })]);
    expect(prNotes()).toHaveLength(2);
    const { rows: pr } = await db().query<{ reviewState: string }>(`SELECT "reviewState"::text AS "reviewState" FROM "PullRequest" WHERE "id" = $1`, [PR_ID]);
    expect(pr[0]?.reviewState).toBe("changes_requested");

    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^review/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
  });

  test("a viewer cannot ask for either, and the procedures refuse them", async ({ page, baseURL }) => {
    expect(runId).not.toBe("");
    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/runs/${runId}`);
    await expect(page.getByRole("button", { name: "Post diagnosis as a comment" })).toBeDisabled();
    await expect(page.getByRole("button", { name: "Post review" })).toBeDisabled();
    for (const [procedure, input] of [
      ["writeBacks.requestDiagnosisComment", { runId }],
      ["writeBacks.requestReview", { runId, choice: "comment" }],
    ] as const) {
      const res = await postTrpc(page, baseURL!, procedure, input);
      expect(res.status(), `${procedure}: ${await res.text()}`).toBe(403);
    }
  });
});
