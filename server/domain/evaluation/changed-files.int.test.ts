// GitHub PR changed files for path-filtered trigger rules, read through Octokit from a local
// HTTP server that answers like GitHub's pulls.listFiles (pages of 100, renames with their old
// path), and the drop reason when GitHub does not answer.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.GITHUB_WEBHOOK_SECRET = "webhook-secret-for-changed-files-tests";

const { getDb } = await import("@/server/db");
const { createRepository } = await import("@/server/testing/factories");
const { createRule, createStack, sha } = await import("@/server/domain/ingest/fixtures/world");
const { failedCheckRun } = await import("@/server/domain/ingest/fixtures/deliveries");
const { post } = await import("./fixtures/harness");
const { evaluateDelivery } = await import("./evaluate");
const { githubChangedFiles } = await import("./changed-files");
const { listPullRequestFiles } = await import("@/server/forges/github/pull-files");

const db = getDb();
type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_u, _q, res) => res.end("[]");
const seen: string[] = [];
const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  seen.push(`${req.method} ${url.pathname}${url.search}`);
  handler(url, req, res);
});
let baseUrl = "";
let stackId = "";

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stackId = (await createStack(db)).id;
});
afterAll(() => {
  server.close();
});

/** One entry as GitHub's "List pull requests files" returns it. */
const file = (filename: string, extra: Record<string, unknown> = {}) => ({
  sha: "bbcd538c8e72b8c175046e27cc8f907076331401",
  filename,
  status: "modified",
  additions: 1,
  deletions: 1,
  changes: 2,
  blob_url: `https://github.com/octocat/Hello-World/blob/6dcb09b5b57875f334f61aebed695e2e4193db5e/${filename}`,
  raw_url: `https://github.com/octocat/Hello-World/raw/6dcb09b5b57875f334f61aebed695e2e4193db5e/${filename}`,
  contents_url: `https://api.github.com/repos/octocat/Hello-World/contents/${filename}?ref=6dcb09b5b57875f334f61aebed695e2e4193db5e`,
  patch: "@@ -1 +1 @@\n-a\n+b",
  ...extra,
});

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
};

async function githubWorld() {
  const repo = await createRepository();
  const repository = await db.repository.update({ where: { id: repo.id }, data: { forge: "github" } });
  const rule = await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id, pathFilters: ["services/api/**"], name: `api-only-${repo.id}` });
  return { repository, rule };
}

const lookup = () => githubChangedFiles({ token: "ghs_files_token", baseUrl });

describe("path filters on GitHub pull requests", () => {
  it("reads every page of the PR's files and matches the path-filtered rule on a file renamed out of its path", async () => {
    const { repository, rule } = await githubWorld();
    seen.length = 0;
    handler = (url, _req, res) => {
      const page = Number(url.searchParams.get("page"));
      if (page === 1) return json(res, 200, Array.from({ length: 100 }, (_, i) => file(`docs/page-${i}.md`)));
      return json(res, 200, [file("lib/handler.ts", { status: "renamed", previous_filename: "services/api/handler.ts" }), file("README.md")]);
    };
    const posted = await post(failedCheckRun({ repo: repository.fullName, suiteId: 4401, checkRunId: 440101, name: "api tests", headSha: sha("files-ok"), headBranch: "feature/api", pr: { number: 77, headRef: "feature/api" }, appName: "Buildkite" }));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId, changedFiles: lookup() });

    expect(seen).toEqual([
      `GET /repos/${repository.fullName}/pulls/77/files?per_page=100&page=1`,
      `GET /repos/${repository.fullName}/pulls/77/files?per_page=100&page=2`,
    ]);
    expect(result.created).toHaveLength(1);
    const run = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: result.created[0]!.runId } });
    expect(run.triggerRuleId).toBe(rule.id);
  });

  it("drops the path-filtered rule with GitHub's answer as the reason when the lookup fails", async () => {
    const { repository, rule } = await githubWorld();
    handler = (_url, _req, res) => json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files" });
    const posted = await post(failedCheckRun({ repo: repository.fullName, suiteId: 4402, checkRunId: 440201, name: "api tests", headSha: sha("files-404"), headBranch: "feature/api", pr: { number: 78, headRef: "feature/api" }, appName: "Buildkite" }));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId, changedFiles: lookup() });

    expect(result.created).toEqual([]);
    expect(result.detail).toContain(`changed files unknown, path-filtered rules (${rule.name}) cannot match: GitHub did not list the files of #78: 404`);
    expect((await db.webhookDelivery.findUniqueOrThrow({ where: { deliveryId: posted.deliveryId } })).detail).toContain("GitHub did not list the files of #78");
  });

  it("does not call GitHub when no rule filters on paths", async () => {
    const repo = await createRepository();
    const repository = await db.repository.update({ where: { id: repo.id }, data: { forge: "github" } });
    await createRule(db, { kind: "failed_check", stackId, repositoryId: repository.id });
    seen.length = 0;
    const posted = await post(failedCheckRun({ repo: repository.fullName, suiteId: 4403, checkRunId: 440301, name: "api tests", headSha: sha("files-none"), headBranch: "feature/x", pr: { number: 79, headRef: "feature/x" }, appName: "Buildkite" }));
    const result = await evaluateDelivery({ db, deliveryId: posted.deliveryId, changedFiles: lookup() });
    expect(result.created).toHaveLength(1);
    expect(seen).toEqual([]);
  });
});

describe("listPullRequestFiles", () => {
  it("stops at its bound and reports the list as incomplete rather than partial", async () => {
    handler = (url, _req, res) => json(res, 200, Array.from({ length: 100 }, (_, i) => file(`gen/${url.searchParams.get("page")}-${i}.ts`)));
    seen.length = 0;
    const result = await listPullRequestFiles({ token: "t", baseUrl, repository: "acme/big", number: 5, maxFiles: 250 });
    expect(result).toEqual({ ok: false, reason: "#5 changes more than 250 files; path filters cannot be checked against a partial list" });
    expect(seen).toHaveLength(3);
  });

  it("refuses without a token and without asking GitHub", async () => {
    seen.length = 0;
    expect(await listPullRequestFiles({ token: null, baseUrl, repository: "acme/x", number: 1 })).toMatchObject({ ok: false, reason: expect.stringContaining("GITHUB_TOKEN") });
    expect(seen).toEqual([]);
  });
});
