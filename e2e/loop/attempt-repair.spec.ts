import { randomUUID } from "node:crypto";
import { expect, signIn, test } from "../fixtures";
import { DEMO_REPOSITORY as REPOSITORY, demoGit as git, demoMainHead as mainHead, loopDbForSpec, manualRule, mutateTrpc, postTrpc } from "./demo-forge";

// "Attempt repair" on a suggestion by clicks, with the worker running (issue 19). A failed check
// on a branch of demo/calculator is suggested as a diagnosis (the seeded calculator-npm-test
// rule); the admin gives the repository a repair stack (a manual repair rule with the scripted
// fixer, through the product's own procedure); the maintainer presses "Attempt repair" on the
// suggestion in /runs: the run becomes a repair run with that rule's stack, is queued at once and
// the worker takes it to its patch awaiting approval. A viewer sees the button refused and the
// procedure refuses them. Under e2e/loop/ so it has its own server and database.

const BRANCH = "e2e/attempt-repair";
const REPAIR_STACK = "scripted-demo-fixer";
const db = loopDbForSpec();


type Suggestion = { id: string; number: number; taskKind: string; status: string; stackName: string | null };
const suggestionOnBranch = async (): Promise<Suggestion | undefined> =>
  (
    await db().query<Suggestion>(
      `SELECT "id", "number", "taskKind"::text AS "taskKind", "status"::text AS "status", "stackSnapshot"->>'name' AS "stackName"
         FROM "AgentDispatchRun" WHERE "headBranch" = $1 ORDER BY "createdAt" DESC LIMIT 1`,
      [BRANCH],
    )
  ).rows[0];

test.describe.configure({ mode: "serial" });
test.describe("attempt repair on a suggestion", () => {
  test.setTimeout(300_000);
  let suggestion: Suggestion | undefined;

  test("a failed check's suggestion; with a repair stack set, Attempt repair runs it as a repair to its patch", async ({ page, baseURL }) => {
    await expect.poll(mainHead, { timeout: 180_000, intervals: [1_000] }).not.toBe("");
    // A commit of its own on a branch of the repository (main's tree, so the check still fails):
    // its failure is a new suggestion, not a duplicate of the demo run's on main.
    const main = mainHead();
    const commit = git("commit-tree", `${main}^{tree}`, "-p", main, "-m", "e2e: attempt repair");
    git("update-ref", `refs/heads/${BRANCH}`, commit);
    const repositoryId = (await db().query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY])).rows[0]!.id;

    await signIn(page, baseURL!, "user_maintainer");
    await mutateTrpc(page, baseURL!, "repositorySettings.runCheck", { repositoryId, requestId: randomUUID(), branch: BRANCH });
    await expect.poll(async () => (suggestion = await suggestionOnBranch())?.status, { timeout: 180_000, intervals: [1_000] }).toBe("suggested");
    expect(suggestion!.taskKind).toBe("diagnose");

    // No repair stack yet: the button says why.
    await page.goto("/runs");
    const item = page.getByTestId("suggestions").getByRole("listitem").filter({ hasText: `#${suggestion!.number}` });
    await expect(item.getByRole("button", { name: "Attempt repair" })).toHaveAccessibleDescription(/No repair stack/);

    // The admin gives the repository its repair stack.
    await page.context().clearCookies();
    await signIn(page, baseURL!, "user_admin");
    const stackId = (await db().query<{ id: string }>(`SELECT "id" FROM "AgentStack" WHERE "name" = $1`, [REPAIR_STACK])).rows[0]!.id;
    await mutateTrpc(page, baseURL!, "triggers.create", manualRule({ name: "calculator-manual-repair", repositoryId, stackId, taskKind: "repair" }));

    await page.context().clearCookies();
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto("/runs");
    const button = item.getByRole("button", { name: "Attempt repair" });
    await expect(button).toBeEnabled();
    await expect(button).toHaveAttribute("title", `Runs as a repair task with stack ${REPAIR_STACK}`);
    await button.click();
    await expect(page.getByText("Dispatched as a repair run: the first attempt is queued")).toBeVisible();
    await expect(item).toHaveCount(0);

    // The worker runs the repair with the rule's stack; its patch waits for a person.
    await expect.poll(async () => (await suggestionOnBranch())?.status, { timeout: 180_000, intervals: [1_000] }).toBe("awaiting_approval");
    expect(await suggestionOnBranch()).toMatchObject({ id: suggestion!.id, taskKind: "repair", stackName: REPAIR_STACK });
    const audit = await db().query<{ detail: { taskKind?: { from: string; to: string } } }>(`SELECT "detail" FROM "AuditEntry" WHERE "action" = 'run.dispatch' AND "objectId" = $1`, [suggestion!.id]);
    expect(audit.rows.map((r) => r.detail.taskKind)).toEqual([{ from: "diagnose", to: "repair" }]);
    await page.goto(`/runs/${suggestion!.id}`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await expect(page.getByText(`${REPAIR_STACK} v`).first()).toBeVisible();
  });

  test("a viewer is refused: the button says so and the procedure answers 403, changing nothing", async ({ page, baseURL }) => {
    // A second suggestion for the viewer to try (the first is dispatched).
    const main = mainHead();
    const commit = git("commit-tree", `${main}^{tree}`, "-p", main, "-m", "e2e: attempt repair, viewer");
    git("update-ref", `refs/heads/${BRANCH}`, commit);
    const repositoryId = (await db().query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY])).rows[0]!.id;
    await signIn(page, baseURL!, "user_maintainer");
    await mutateTrpc(page, baseURL!, "repositorySettings.runCheck", { repositoryId, requestId: randomUUID(), branch: BRANCH });
    let fresh: Suggestion | undefined;
    await expect.poll(async () => ((fresh = await suggestionOnBranch())?.id !== suggestion!.id ? fresh?.status : undefined), { timeout: 180_000, intervals: [1_000] }).toBe("suggested");

    await page.context().clearCookies();
    await signIn(page, baseURL!, "user_viewer");
    await page.goto("/runs");
    const item = page.getByTestId("suggestions").getByRole("listitem").filter({ hasText: `#${fresh!.number}` });
    await expect(item.getByRole("button", { name: "Attempt repair" })).toHaveAccessibleDescription(/maintainer/);
    const res = await postTrpc(page, baseURL!, "runs.dispatch", { runId: fresh!.id, taskKind: "repair" });
    expect(res.status()).toBe(403);
    expect(await suggestionOnBranch()).toMatchObject({ id: fresh!.id, status: "suggested", taskKind: "diagnose" });
  });
});
