import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Forge, type ForgeWriteBackRequest, writeBackMarker } from "../types";
import { type FakeGithub, startFakeGithub } from "./testing/fake-github";
import { createGithubForge, patchPaths } from "./write-back";

// The GitHub forge against a local HTTP server speaking GitHub's REST shapes (Octokit's real
// request path: fetch, headers, JSON parsing through content-type, RequestError).

const calc = "export function sum(a, b) {\n  return a + b + 1;\n}\n";
const patch = [
  "diff --git a/src/calc.js b/src/calc.js",
  "--- a/src/calc.js",
  "+++ b/src/calc.js",
  "@@ -1,3 +1,3 @@",
  " export function sum(a, b) {",
  "-  return a + b + 1;",
  "+  return a + b;",
  " }",
  "diff --git a/run.sh b/run.sh",
  "--- a/run.sh",
  "+++ b/run.sh",
  "@@ -1,2 +1,2 @@",
  " #!/bin/sh",
  "-echo old",
  "+echo new",
  "diff --git a/NOTES.md b/NOTES.md",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/NOTES.md",
  "@@ -0,0 +1 @@",
  "+fixed",
  "diff --git a/old.txt b/old.txt",
  "deleted file mode 100644",
  "--- a/old.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-bye",
  "",
].join("\n");

let gh: FakeGithub;
let forge: Forge;
let n = 0;
let fullName: string;
let headSha: string;

beforeAll(async () => {
  gh = await startFakeGithub();
  forge = createGithubForge({ token: gh.token, baseUrl: gh.url, throttle: false });
});
afterAll(() => gh.close());
beforeEach(() => {
  gh.intercept(null);
  fullName = `acme/app-${++n}`;
  ({ headSha } = gh.createRepository(fullName, { branch: "fix", files: { "src/calc.js": calc, "run.sh": "#!/bin/sh\necho old\n", "old.txt": "bye\n", "README.md": "app\n" }, executable: ["run.sh"], pulls: [7] }));
});

const req = (over: Partial<ForgeWriteBackRequest> = {}): ForgeWriteBackRequest => ({
  kind: "update_pr_branch",
  idempotencyKey: `wb_key${n}`,
  runId: "run_1",
  approvalId: "appr_1",
  target: { repository: fullName, branch: "fix", prNumber: 7, headSha },
  patch,
  message: "Fix sum(): drop the off-by-one",
  ...over,
});

describe("patchPaths", () => {
  it("reads old and new paths, with /dev/null for created and deleted files", () => {
    expect(patchPaths(patch)).toEqual([
      { from: "src/calc.js", to: "src/calc.js" },
      { from: "run.sh", to: "run.sh" },
      { from: null, to: "NOTES.md" },
      { from: "old.txt", to: null },
    ]);
  });
});

describe("GitHub forge against a fake GitHub", () => {
  it("commits a patch through the git data API: the tree changes, the ref moves, the trailers are in the message", async () => {
    const res = await forge.executeWriteBack(req());
    expect(gh.branchHead(fullName, "fix")).toBe(res.externalRef);
    expect(res.detail).toBe(`https://github.example.test/${fullName}/commit/${res.externalRef}`);
    const commit = gh.commit(fullName, res.externalRef);
    expect(commit?.parents).toEqual([headSha]);
    expect(commit?.message).toBe("Fix sum(): drop the off-by-one\n\nAirlock-Run: run_1\nAirlock-Approval: appr_1\nAirlock-Write-Back: wb_key" + n + "\n");
    expect(gh.filesAt(fullName, "fix")).toEqual({ "src/calc.js": "export function sum(a, b) {\n  return a + b;\n}\n", "run.sh": "#!/bin/sh\necho new\n", "NOTES.md": "fixed\n", "README.md": "app\n" });
    expect(gh.modeAt(fullName, "fix", "run.sh")).toBe("100755");
    expect(gh.modeAt(fullName, "fix", "NOTES.md")).toBe("100644");
    // The non-forced ref update GitHub is asked for.
    const update = gh.requests.find((r) => r.method === "PATCH" && decodeURIComponent(r.path) === `/repos/${fullName}/git/refs/heads/fix`);
    expect(update?.body).toEqual({ sha: res.externalRef, force: false });
    expect(update?.authorization).toMatch(new RegExp(`^(token|bearer) ${gh.token}$`, "i"));
  });

  it("refuses when the branch moved from the head the approver saw, without writing", async () => {
    const moved = gh.pushCommit(fullName, "fix", { "README.md": "changed\n" }, "someone else");
    await expect(forge.executeWriteBack(req())).rejects.toMatchObject({ reason: "head_moved", message: expect.stringContaining(`moved from ${headSha.slice(0, 12)} to ${moved.slice(0, 12)}`) });
    expect(gh.branchHead(fullName, "fix")).toBe(moved);
    expect(gh.requests.filter((r) => r.method === "POST" && r.path.startsWith(`/repos/${fullName}/`))).toHaveLength(0);
  });

  it("surfaces GitHub's 422 'not a fast forward' when the branch moves during the write", async () => {
    gh.intercept((r) => {
      if (r.method === "PATCH" && decodeURIComponent(r.path).endsWith("/git/refs/heads/fix")) {
        gh.intercept(null);
        gh.pushCommit(fullName, "fix", { "README.md": "raced\n" }, "a racing push");
      }
      return undefined;
    });
    const err = await forge.executeWriteBack(req()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ForgeError", reason: "head_moved" });
    expect((err as Error).message).toMatch(/^GitHub refused to commit to fix: 422 Update is not a fast forward/);
    expect(gh.filesAt(fullName, "fix")["README.md"]).toBe("raced\n");
    expect(gh.history(fullName, "fix")).toHaveLength(2);
  });

  it("a patch that does not apply is refused with git's message and nothing is written", async () => {
    const bad = patch.replace("-  return a + b + 1;", "-  return a - b;");
    await expect(forge.executeWriteBack(req({ patch: bad }))).rejects.toMatchObject({ reason: "patch_does_not_apply", message: expect.stringMatching(/does not apply at .*src\/calc\.js/s) });
    expect(gh.branchHead(fullName, "fix")).toBe(headSha);
  });

  it("404: an unknown repository or branch surfaces GitHub's message", async () => {
    await expect(forge.executeWriteBack(req({ target: { repository: "acme/nope", branch: "fix", headSha } }))).rejects.toMatchObject({ reason: "not_found", message: expect.stringContaining("404 Not Found (no branch fix in acme/nope") });
    await expect(forge.executeWriteBack(req({ target: { repository: fullName, branch: "gone" } }))).rejects.toMatchObject({ reason: "not_found", message: expect.stringContaining("404 Not Found (no branch gone") });
    await expect(forge.findWriteBack(req({ target: { repository: "acme/nope", branch: "fix" } }))).rejects.toMatchObject({ message: expect.stringContaining("GitHub refused to look up an earlier write-back: 404 Not Found") });
    await expect(forge.executeWriteBack(req({ kind: "comment", target: { repository: fullName, prNumber: 99 } }))).rejects.toMatchObject({ reason: "not_found", message: expect.stringContaining("GitHub refused to comment: 404 Not Found") });
  });

  it("5xx: GitHub's error is surfaced, and the branch is untouched", async () => {
    gh.intercept((r) => (r.method === "POST" && r.path.endsWith("/git/commits") ? { status: 502, body: { message: "Server Error: the git backend is unavailable" } } : undefined));
    await expect(forge.executeWriteBack(req())).rejects.toMatchObject({ reason: "forge_error", message: "GitHub refused to commit to fix: 502 Server Error: the git backend is unavailable" });
    expect(gh.branchHead(fullName, "fix")).toBe(headSha);
  });

  it("bad credentials are reported, not retried silently", async () => {
    const wrong = createGithubForge({ token: "ghp_wrong", baseUrl: gh.url, throttle: false });
    await expect(wrong.branchHead(fullName, "fix")).rejects.toMatchObject({ message: expect.stringContaining("401 Bad credentials") });
  });

  it("comments and reviews carry the marker; reconciliation finds them by it, past the first page", async () => {
    const c = await forge.executeWriteBack(req({ kind: "comment", message: "The sum is off by one.", patch: undefined }));
    const comments = gh.repo(fullName).comments.get(7) ?? [];
    expect(comments).toHaveLength(1);
    expect(comments[0]).toMatchObject({ id: Number(c.externalRef), body: `The sum is off by one.\n\n${writeBackMarker(`wb_key${n}`)}` });
    // 150 later comments push ours past the first page of 100.
    for (let i = 0; i < 150; i++) gh.repo(fullName).comments.get(7)?.unshift({ id: 1_000_000 + i, body: `noise ${i}`, createdAt: "2026-11-30T00:00:00Z" });
    expect(await forge.findWriteBack(req({ kind: "comment", patch: undefined }))).toEqual(c);
    expect(await forge.findWriteBack(req({ kind: "comment", patch: undefined, idempotencyKey: "wb_other" }))).toBeNull();

    const r = await forge.executeWriteBack(req({ kind: "approve_review", message: "Looks right.", patch: undefined }));
    expect(gh.repo(fullName).reviews.get(7)).toMatchObject([{ id: Number(r.externalRef), state: "APPROVED", body: expect.stringContaining(writeBackMarker(`wb_key${n}`)) }]);
    expect(await forge.findWriteBack(req({ kind: "approve_review", patch: undefined }))).toEqual(r);
    const commentReview = await forge.executeWriteBack(req({ kind: "review", idempotencyKey: "wb_review2", message: "A note.", patch: undefined }));
    expect(gh.repo(fullName).reviews.get(7)?.find((x) => String(x.id) === commentReview.externalRef)?.state).toBe("COMMENTED");
  });

  it("reconciliation finds a pushed commit by its trailer, but not a commit the ref never reached", async () => {
    expect(await forge.findWriteBack(req())).toBeNull();
    // Crash after createCommit, before updateRef: the commit exists but is not on the branch.
    gh.intercept((r) => (r.method === "PATCH" ? { status: 500, body: { message: "worker killed" } } : undefined));
    await expect(forge.executeWriteBack(req())).rejects.toThrow(/500 worker killed/);
    gh.intercept(null);
    expect(await forge.findWriteBack(req())).toBeNull();
    const res = await forge.executeWriteBack(req());
    expect(await forge.findWriteBack(req())).toEqual({ externalRef: res.externalRef, detail: `https://github.example.test/${fullName}/commit/${res.externalRef}` });
    expect(gh.history(fullName, "fix").map((c) => c.sha)).toEqual([res.externalRef, headSha]);
  });

  it("reruns a workflow's failed jobs; a rerun already underway is found, not requested twice", async () => {
    gh.addWorkflowRun(fullName, { id: 555, status: "completed", conclusion: "failure", headSha, headBranch: "fix" });
    const rerun = req({ kind: "rerun_workflow", target: { repository: fullName, check: "555" }, patch: undefined });
    expect(await forge.findWriteBack(rerun)).toBeNull();
    expect(await forge.executeWriteBack(rerun)).toMatchObject({ externalRef: "555" });
    expect(gh.requests.at(-1)).toMatchObject({ method: "POST", path: `/repos/${fullName}/actions/runs/555/rerun-failed-jobs` });
    expect(gh.repo(fullName).workflowRuns.get(555)).toMatchObject({ status: "queued", runAttempt: 2 });
    expect(await forge.findWriteBack(rerun)).toMatchObject({ externalRef: "555#2" });
    // GitHub's own refusal to rerun an unfinished run is surfaced.
    await expect(forge.executeWriteBack(rerun)).rejects.toMatchObject({ message: expect.stringContaining("403 This workflow run is not completed") });
    await expect(forge.executeWriteBack(req({ kind: "rerun_workflow", target: { repository: fullName, check: "build" }, patch: undefined }))).rejects.toMatchObject({ message: "a rerun needs the workflow run id as its check" });
  });

  it("reruns one failed job; with the attempt pinned, a finished rerun is still found", async () => {
    gh.addWorkflowRun(fullName, { id: 556, status: "completed", conclusion: "failure", headSha, headBranch: "fix", jobs: [{ id: 9001, name: "test", conclusion: "failure" }] });
    expect(await forge.workflowRun?.(fullName, "556")).toMatchObject({ attempt: 1, status: "completed", conclusion: "failure" });
    const rerun = req({ kind: "rerun_workflow", target: { repository: fullName, check: "556" }, patch: undefined, rerunJobId: "9001", rerunAttemptBefore: 1 });
    expect(await forge.findWriteBack(rerun)).toBeNull();
    expect(await forge.executeWriteBack(rerun)).toMatchObject({ externalRef: "556#2", detail: "job 9001 of workflow run 556 rerun requested" });
    expect(gh.requests.at(-1)).toMatchObject({ method: "POST", path: `/repos/${fullName}/actions/jobs/9001/rerun` });
    // The rerun finished before the record: the pinned attempt still tells it was done.
    Object.assign(gh.repo(fullName).workflowRuns.get(556) ?? {}, { status: "completed", conclusion: "success" });
    expect(await forge.findWriteBack(rerun)).toMatchObject({ externalRef: "556#2" });
    expect(await forge.workflowRun?.(fullName, "556", 2)).toMatchObject({ attempt: 2, status: "completed", conclusion: "success" });
    expect(await forge.workflowRun?.(fullName, "556", 3)).toBeNull();
    expect(await forge.workflowRun?.(fullName, "999")).toBeNull();
  });

  it("flips labels on a pull request; a label already gone counts as removed", async () => {
    gh.setIssueLabels(fullName, 7, ["bug", "ready-for-agent"]);
    const flipped = await forge.setLabels(fullName, 7, { add: ["ready-for-human"], remove: ["ready-for-agent"] });
    expect(flipped.labels).toEqual(["bug", "ready-for-human"]);
    expect(gh.labelsOn(fullName, 7)).toEqual(["bug", "ready-for-human"]);
    const calls = gh.requests.filter((r) => r.path.startsWith(`/repos/${fullName}/issues/7/labels`));
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /repos/${fullName}/issues/7/labels/ready-for-agent`, `POST /repos/${fullName}/issues/7/labels`]);
    expect(calls[1]?.body).toEqual({ labels: ["ready-for-human"] });

    // A retried flip: removing the absent label is GitHub's 404 "Label does not exist", which is
    // done; adding the present one changes nothing.
    gh.requests.length = 0;
    expect((await forge.setLabels(fullName, 7, { add: ["ready-for-human"], remove: ["ready-for-agent"] })).labels).toEqual(["bug", "ready-for-human"]);
    expect(gh.labelsOn(fullName, 7)).toEqual(["bug", "ready-for-human"]);
    // Only a removal, of an absent label: the labels are read back.
    expect((await forge.setLabels(fullName, 7, { add: [], remove: ["ready-for-agent"] })).labels).toEqual(["bug", "ready-for-human"]);
    // Back again (re-open for agents), with a name in other case matching as on GitHub.
    expect((await forge.setLabels(fullName, 7, { add: ["ready-for-agent"], remove: ["Ready-For-Human"] })).labels).toEqual(["bug", "ready-for-agent"]);
  });

  it("reports other label failures as forge errors", async () => {
    await expect(forge.setLabels(fullName, 99, { add: ["ready-for-human"], remove: [] })).rejects.toMatchObject({ name: "ForgeError", reason: "not_found" });
    gh.intercept((r) => (r.method === "DELETE" ? { status: 403, body: { message: "Resource not accessible by integration" } } : undefined));
    await expect(forge.setLabels(fullName, 7, { add: [], remove: ["ready-for-agent"] })).rejects.toMatchObject({
      name: "ForgeError",
      message: expect.stringContaining("403 Resource not accessible by integration"),
    });
  });

  it("asks reviewers for review again; GitHub's refusal is a forge error", async () => {
    expect((await forge.requestReview(fullName, 7, ["octo-reviewer"])).detail).toBe(`review requested from octo-reviewer on https://github.example.test/${fullName}/pull/7`);
    await forge.requestReview(fullName, 7, ["octo-reviewer"]);
    expect(gh.repo(fullName).requestedReviewers.get(7)).toEqual(["octo-reviewer"]);
    await expect(forge.requestReview(fullName, 7, [])).rejects.toMatchObject({ name: "ForgeError" });
    gh.intercept((r) => (r.path.endsWith("/requested_reviewers") ? { status: 422, body: { message: "Review cannot be requested from pull request author." } } : undefined));
    await expect(forge.requestReview(fullName, 7, ["airlock-bot"])).rejects.toMatchObject({ message: expect.stringContaining("422 Review cannot be requested from pull request author.") });
  });
});
