import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, signIn, test } from "../fixtures";
import { approveAndWait, clickUntil, DEMO_REPOSITORY as REPOSITORY, demoBareRepo, demoGit as git, demoMainHead as mainHead, loopDbForSpec, MAINTAINER, manualRule, mutateTrpc, postTrpc, provenanceOf } from "./demo-forge";

// The publish_release write-back in the browser, with the worker running (issue 19). The local
// forge sends no release events, so the release review is started the way a maintainer can: the
// admin adds a scripted release-review stack (the built-in "release-readiness" scenario: a
// recorded agent that leaves a readiness report, no model called) and a manual trigger rule for
// demo/calculator; the maintainer dispatches a release review of main from the repository page.
// Its run succeeds with the report; "Publish release" asks for the tag v1.0.0; the approval screen
// shows the tag, the commit, the name, the notes byte for byte, the readiness report and the
// artifact's digest; approved (publishing always waits for a person), the local forge holds one
// annotated tag at that commit and one release record with the artifact's very bytes, and the run
// page shows the write-back's provenance. Under e2e/loop/ so it has its own server and database.

const TAG = "v1.0.0";
const STACK = "scripted-release-reviewer";

const releasesDir = () => `${demoBareRepo().replace(/\.git$/, "")}.releases`;
type Release = { tag: string; name: string; notes: string; commitSha: string; tagObject: string; artifact: { name: string; digest: string; sizeBytes: number; path: string }; key: string };
const releases = (): Release[] =>
  existsSync(releasesDir())
    ? readdirSync(releasesDir())
        .filter((f) => f.endsWith(".json"))
        .map((f) => JSON.parse(readFileSync(join(releasesDir(), f), "utf8")) as Release)
    : [];

const db = loopDbForSpec();


test.describe.configure({ mode: "serial" });
test.describe("publish release on the local forge", () => {
  test.setTimeout(300_000);
  let runId = "";

  test("a release review dispatched by hand; Publish release shows the tag, notes, report and digest; approved, one tag and one release", async ({ page, baseURL }) => {
    await expect.poll(mainHead, { timeout: 180_000, intervals: [1_000] }).not.toBe("");
    const head = mainHead();
    const { rows: repo } = await db().query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [REPOSITORY]);
    const repositoryId = repo[0]!.id;

    // The admin's setup, through the product's own procedures: the scripted stack, the manual rule.
    await signIn(page, baseURL!, "user_admin");
    const { rows: fixer } = await db().query<{ spec: Record<string, unknown> }>(
      `SELECT v."spec" FROM "AgentStackVersion" v JOIN "AgentStack" s ON s."id" = v."stackId" WHERE s."name" = 'scripted-demo-fixer' ORDER BY v."version" DESC LIMIT 1`,
    );
    const stack = await mutateTrpc<{ id: string }>(page, baseURL!, "stacks.create", {
      name: STACK,
      description: "Replays the recorded release-readiness scenario (a readiness report, no patch). Demo and tests only: no model is called.",
      spec: { ...fixer[0]!.spec, adapter: { kind: "scripted", scenario: "release-readiness" }, approvalMode: "always" },
    });
    await mutateTrpc(page, baseURL!, "triggers.create", manualRule({ name: "calculator-release-review", repositoryId, stackId: stack.id, taskKind: "release_review" }));

    // The maintainer dispatches the release review of main from the repository page.
    await signIn(page, baseURL!, "user_maintainer");
    await page.goto(`/settings/repositories/${repositoryId}`);
    const dialog = page.getByRole("dialog", { name: "Dispatch a run" });
    await clickUntil(page.getByRole("button", { name: "Dispatch a run" }), dialog);
    await dialog.getByLabel("Task kind").selectOption("release_review");
    await expect(dialog.getByLabel("Stack")).toContainText(STACK);
    await expect(dialog.getByLabel("Branch")).toHaveValue("main");
    await dialog.getByRole("button", { name: "Dispatch run" }).click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    runId = new URL(page.url()).pathname.split("/").at(-1)!;
    await expect(async () => {
      await page.reload();
      await expect(page.getByTestId("run-status")).toContainText(/succeeded/i, { timeout: 2_000 });
    }).toPass({ timeout: 120_000, intervals: [1_000, 2_000] });
    const { rows: reports } = await db().query<{ id: string; name: string; digest: string; content: string; sizeBytes: number }>(
      `SELECT "id", "name", "digest", "content", "sizeBytes" FROM "Artifact" WHERE "runId" = $1 AND "kind" = 'report'`,
      [runId],
    );
    expect(reports.map((r) => r.name)).toEqual(["readiness-report.md"]);
    const report = reports[0]!;

    // Publish release: the tag is typed (a run started by hand carries none); the report is the artifact.
    const publish = page.getByRole("dialog", { name: "Publish a release" });
    await clickUntil(page.getByRole("button", { name: "Publish release" }), publish);
    await publish.getByLabel("Tag").fill(TAG);
    await expect(publish.getByLabel("Artifact to publish")).toHaveValue("");
    await publish.getByRole("button", { name: "Ask to publish" }).click();
    await page.waitForURL(/\/approvals\/[a-z0-9]+$/, { timeout: 30_000 });
    const approvalId = new URL(page.url()).pathname.split("/").at(-1)!;

    // The screen against what the request froze.
    const { rows: frozen } = await db().query<{ action: string; release: { tag: string; commitSha: string; name: string; notes: string; artifact: { digest: string; sizeBytes: number } } }>(
      `SELECT "action"::text AS "action", "presented"->'release' AS "release" FROM "ApprovalRequest" WHERE "id" = $1`,
      [approvalId],
    );
    expect(frozen[0]).toMatchObject({ action: "publish_release", release: { tag: TAG, commitSha: head, name: TAG, artifact: { digest: report.digest, sizeBytes: report.sizeBytes } } });
    const notes = frozen[0]!.release.notes;
    const shown = page.getByRole("region", { name: "Release to publish" });
    await expect(shown.getByTestId("release-tag")).toHaveText(TAG);
    await expect(shown).toContainText(head);
    await expect(shown.getByTestId("artifact-digest")).toHaveText(`${report.name} ${report.digest} (${report.sizeBytes.toLocaleString("en")} bytes)`);
    expect(await page.getByTestId("posted-body").textContent()).toBe(notes);
    const readiness = page.getByRole("region", { name: "Readiness report" });
    await expect(readiness).toContainText(`${report.name} ${report.digest}`);
    await expect(readiness).toContainText("Publishing gaps: none found.");
    await expect(page.getByRole("region", { name: "Why approval" })).toContainText("release_publish_needs_a_person");
    // Nothing is published before the approval.
    expect(git("tag", "--list", TAG)).toBe("");
    expect(releases()).toEqual([]);

    const writeBack = await approveAndWait(page);
    await expect(writeBack).toContainText(`release ${TAG}`);

    // The forge: one annotated tag at the commit, and one release record with the artifact's bytes.
    const { rows: wb } = await db().query<{ key: string }>(`SELECT "idempotencyKey" AS "key" FROM "WriteBack" WHERE "approvalId" = $1`, [approvalId]);
    const key = wb[0]!.key;
    expect(git("cat-file", "-t", `refs/tags/${TAG}`)).toBe("tag");
    expect(git("rev-parse", `${TAG}^{commit}`)).toBe(head);
    const tagMessage = git("cat-file", "tag", `refs/tags/${TAG}`);
    expect(tagMessage).toContain(`Airlock-Approval: ${approvalId}`);
    expect(tagMessage).toContain(notes.trim());
    const published = releases();
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ tag: TAG, name: TAG, commitSha: head, key, notes: `${notes.trim()}\n\n<!-- airlock-write-back: ${key} -->`, artifact: { name: report.name, digest: report.digest } });
    expect(readFileSync(published[0]!.artifact.path, "utf8")).toBe(report.content);

    // The run page: the write-back's provenance; a second publish is refused.
    await page.goto(`/runs/${runId}`);
    const provenance = provenanceOf(page, /^publish release/);
    await expect(provenance).toContainText("succeeded");
    await expect(provenance).toContainText(`approved by ${MAINTAINER}`);
    await expect(provenance).toContainText(report.digest.slice(0, 15));
    await expect(provenance).toContainText(`release ${TAG}`);
    await expect(page.getByRole("button", { name: "Publish release" })).toBeDisabled();
  });

  test("a viewer cannot ask to publish, and the procedure refuses them", async ({ page, baseURL }) => {
    expect(runId).not.toBe("");
    await signIn(page, baseURL!, "user_viewer");
    await page.goto(`/runs/${runId}`);
    await expect(page.getByRole("button", { name: "Publish release" })).toBeDisabled();
    const res = await postTrpc(page, baseURL!, "writeBacks.requestPublishRelease", { runId, tag: "v9.9.9" });
    expect(res.status(), await res.text()).toBe(403);
  });
});
