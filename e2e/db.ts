import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { test } from "@playwright/test";
import pg from "pg";

// Direct access to the e2e server's throwaway database (its URL is written by
// the webServer command in playwright.config.ts): specs create their own runs
// and append events the way a worker does, with the same SQL as
// server/domain/events/append.ts (counter bump, insert, NOTIFY in one transaction).

export async function e2eDb() {
  return connect("test-results/e2e-database-url");
}

/**
 * No worker runs beside this server, yet the reactions to a run's ending or an approval's
 * decision are jobs (run.ended, approval.decided): a spec that waits on one works the queued
 * reaction jobs as a worker would, with the worker's own handlers (server/queue/testing/reactions.ts).
 */
export function workReactions() {
  const url = readFileSync("test-results/e2e-database-url", "utf8").trim();
  const script = `const { runReactions } = await import("./server/queue/testing/reactions.ts"); await runReactions(); process.exit(0);`;
  execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env: { ...process.env, DATABASE_URL: url }, stdio: "inherit", timeout: 60_000 });
}

/**
 * The e2e database for every test of a spec: opened before the first, closed after the last.
 * It is the chromium project's server's: a spec that also runs in another project (the newcomer
 * walk) opens it only there, since with `--project` that server may not be started at all.
 */
export function e2eDbForSpec(): () => pg.Client {
  let db: pg.Client | undefined;
  test.beforeAll(async ({}, info) => {
    if (info.project.name === "chromium") db = await e2eDb();
  });
  test.afterAll(async () => {
    await db?.end();
  });
  return () => {
    if (!db) throw new Error("the chromium project's e2e database is only open in that project's tests");
    return db;
  };
}

// A loop spec's own server (e2e/loop/serve.mjs: a web server and a worker share its database),
// named by the spec's Playwright project, `loop-<spec>` (playwright.config.ts).
const loopInfo = (project: string, file: string) => `test-results/e2e-loop/${project.replace(/^loop-/, "")}/${file}`;

/** The database of the loop server that `project` (testInfo.project.name) runs against. */
/** Runs `fn` with a connection to the e2e database, closed afterwards. */
export async function withE2eDb<T>(fn: (db: Client) => Promise<T>): Promise<T> {
  const db = await e2eDb();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

export async function loopDb(project: string) {
  return connect(loopInfo(project, "database-url"));
}

/** That server's data directory: the local forge's bare repositories live under it. */
export function loopDataDir(project: string) {
  return readFileSync(loopInfo(project, "data-dir"), "utf8").trim();
}

async function connect(urlFile: string) {
  const client = new pg.Client({ connectionString: readFileSync(urlFile, "utf8").trim() });
  await client.connect();
  return client;
}

type Client = pg.Client;
export type EventInput = { type: string; payload: unknown };

/** A repository where `email` has `role`. */
export async function repositoryOf(db: Client, email: string, role: "viewer" | "maintainer" | "admin") {
  const { rows } = await db.query<{ repositoryId: string }>(
    `SELECT m."repositoryId" FROM "Membership" m JOIN "User" u ON u."id" = m."userId" WHERE u."email" = $1 AND m."role" = $2 ORDER BY m."repositoryId" LIMIT 1`,
    [email, role],
  );
  if (!rows[0]) throw new Error(`${email} is ${role} of no repository`);
  return rows[0].repositoryId;
}

export async function createRun(db: Client, opts: { repositoryId: string; title: string; status?: string }) {
  const id = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const digest = `sha256:${"0".repeat(64)}`;
  await db.query(
    `INSERT INTO "AgentDispatchRun" ("id", "title", "repositoryId", "source", "taskKind", "actor", "status", "headSha", "headBranch",
       "stackSnapshot", "stackDigest", "contextBundle", "contextDigest", "prompt", "promptHash", "dedupeKey", "updatedAt")
     VALUES ($1, $2, $3, 'manual', 'diagnose', 'e2e', $4, $5, 'e2e/branch', $6, $7, $8, $7, 'Diagnose.', $7, $9, now())`,
    [id, opts.title, opts.repositoryId, opts.status ?? "running", "e".repeat(40), JSON.stringify({ name: "e2e-stack", version: 1 }), digest, JSON.stringify({}), `e2e:${id}`],
  );
  return id;
}

/** Appends events with the next seqs and notifies listeners on commit; returns the last seq. */
export async function appendEvents(db: Client, runId: string, events: EventInput[], opts: { status?: string } = {}) {
  await db.query("BEGIN");
  try {
    const { rows } = await db.query<{ lastEventSeq: number }>(
      `UPDATE "AgentDispatchRun" SET "lastEventSeq" = "lastEventSeq" + $2${opts.status ? `, "status" = $3` : ""} WHERE "id" = $1 RETURNING "lastEventSeq"`,
      opts.status ? [runId, events.length, opts.status] : [runId, events.length],
    );
    const last = rows[0]!.lastEventSeq;
    const first = last - events.length + 1;
    const values = events.map((_, i) => `($1, $${i * 3 + 2}, $${i * 3 + 3}, $${i * 3 + 4})`).join(", ");
    await db.query(
      `INSERT INTO "RunEvent" ("runId", "seq", "type", "payload") VALUES ${values}`,
      [runId, ...events.flatMap((e, i) => [first + i, e.type, JSON.stringify(e.payload)])],
    );
    await db.query(`SELECT pg_notify('airlock_run_events', $1)`, [JSON.stringify({ runId, seq: last })]);
    await db.query("COMMIT");
    return last;
  } catch (err) {
    await db.query("ROLLBACK");
    throw err;
  }
}

export const message = (text: string): EventInput => ({ type: "message", payload: { role: "assistant", text } });
export const log = (text: string): EventInput => ({ type: "log", payload: { stream: "stdout", text } });

/** A notification as notify() would store it (in-app only: no webhook job). */
export async function createNotification(
  db: Client,
  opts: { repositoryId: string; title: string; body?: string; href: string; kind?: string; runId?: string | null },
) {
  const id = `e2e${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await db.query(
    `INSERT INTO "Notification" ("id", "repositoryId", "kind", "title", "body", "href", "runId", "dedupeKey")
     VALUES ($1, $2, $3::"NotificationKind", $4, $5, $6, $7, $8)`,
    [id, opts.repositoryId, opts.kind ?? "fix_loop_escalated", opts.title, opts.body ?? "", opts.href, opts.runId ?? null, `e2e:${id}`],
  );
  return id;
}

/** Unread notifications of `email`'s repositories (what the bell counts for a non-admin). */
export async function unreadNotifications(db: Client, email: string) {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Notification" n JOIN "Membership" m ON m."repositoryId" = n."repositoryId" JOIN "User" u ON u."id" = m."userId"
     WHERE u."email" = $1 AND NOT EXISTS (SELECT 1 FROM "NotificationRead" r WHERE r."notificationId" = n."id" AND r."userId" = u."id")`,
    [email],
  );
  return rows[0]!.n;
}
