import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import type { Locator, Page } from "@playwright/test";
import { loopDataDir, loopDb } from "../db";
import { expect, test } from "../fixtures";

// What the write-back loop specs share: the demo repository's bare repository on the loop server's
// local forge, the spec's database, and the clicks every approval takes.

export const DEMO_REPOSITORY = "demo/calculator";
export const MAINTAINER = "maintainer@airlock.local";

/** The loop server's bare repository of the demo (its data dir is written by e2e/loop/serve.mjs). */
export const demoBareRepo = () => resolve(loopDataDir(test.info().project.name), "forge", "demo", "calculator.git");
export const demoGit = (...args: string[]) => execFileSync("git", ["--git-dir", demoBareRepo(), ...args], { encoding: "utf8" }).trim();
/** main's head, once the demo bootstrap (after the server starts) has pushed it; "" before. */
export const demoMainHead = () => {
  try {
    return demoGit("rev-parse", "--verify", "--quiet", "refs/heads/main");
  } catch {
    return "";
  }
};

type Db = Awaited<ReturnType<typeof loopDb>>;

/** The loop server's database for every test of the spec: opened before the first, closed after the last. */
export function loopDbForSpec(): () => Db {
  let db: Db | undefined;
  test.beforeAll(async ({}, info) => {
    db = await loopDb(info.project.name);
  });
  test.afterAll(async () => {
    await db?.end();
  });
  return () => {
    if (!db) throw new Error("the loop database is opened in beforeAll");
    return db;
  };
}

/** A click before hydration does nothing: click until `opened` shows. */
export async function clickUntil(button: Locator, opened: Locator) {
  await expect(async () => {
    if (!(await opened.isVisible())) await button.click({ timeout: 2_000 });
    await expect(opened).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
}

/** Approves on the review screen and waits for the worker's write-back to succeed; returns its region. */
export async function approveAndWait(page: Page, approver = MAINTAINER) {
  await page.getByRole("region", { name: "Requested action" }).getByRole("button", { name: "Approve" }).click();
  await expect(page.getByText("Approved: the write-back is executing")).toBeVisible();
  const writeBack = page.getByRole("region", { name: "Write-back" });
  await expect(writeBack).toContainText("succeeded", { timeout: 120_000 });
  await expect(writeBack).toContainText(approver);
  return writeBack;
}

/** A write-back's line under the run page's Write-backs (not the approvals list's line of the same kind). */
export const provenanceOf = (page: Page, kind: RegExp) => page.getByRole("listitem").filter({ hasText: kind }).filter({ hasText: " · actor " });

/** Posts a tRPC procedure as the signed-in browser does; returns the response. */
export const postTrpc = (page: Page, baseURL: string, procedure: string, input: unknown) =>
  page.request.post(`${baseURL}/api/trpc/${procedure}`, { headers: { origin: baseURL, "content-type": "application/json" }, data: { json: input } });

/** A tRPC mutation as the signed-in browser sends it; fails the test on any answer but 200. */
export async function mutateTrpc<T>(page: Page, baseURL: string, procedure: string, input: unknown): Promise<T> {
  const res = await postTrpc(page, baseURL, procedure, input);
  expect(res.status(), `${procedure}: ${await res.text()}`).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

/** `triggers.create`'s input for an enabled, auto-run manual rule of one repository (every match key empty). */
export const manualRule = (opts: { name: string; repositoryId: string; stackId: string; taskKind: string }) => ({
  ...opts,
  kind: "manual",
  workflow: "",
  job: "",
  step: "",
  branchGlob: "",
  pathFilters: [],
  failureSignature: "",
  action: "auto_run",
  alsoFire: false,
  scanSchedule: "",
  scanWindowHours: null,
  scanThreshold: null,
  enabled: true,
});

/** Inserts a pull request of the local forge (its PRs are Airlock's records) from a new branch at `head`. */
export async function insertLocalPr(db: Db, opts: { id: string; number: number; branch: string; head: string; title: string }): Promise<string> {
  demoGit("update-ref", `refs/heads/${opts.branch}`, opts.head);
  const { rows } = await db.query<{ id: string }>(`SELECT "id" FROM "Repository" WHERE "fullName" = $1`, [DEMO_REPOSITORY]);
  const repositoryId = rows[0]!.id;
  await db.query(
    `INSERT INTO "PullRequest" ("id", "repositoryId", "number", "title", "author", "headRef", "headSha", "baseRef", "updatedAt")
      VALUES ($1, $2, $3, $4, 'alex', $5, $6, 'main', now())`,
    [opts.id, repositoryId, opts.number, opts.title, opts.branch, opts.head],
  );
  return repositoryId;
}
