#!/usr/bin/env node
// The issue #23 "Done when" figures of a running demo, read from its database: failed runs and
// why (none may fail for want of the internet, a commit or a command), escalations, red-check
// attributions by kind, notifications, and what waits for a person.
//   node scripts/demo-check.mjs [checkout]   (the checkout whose `npm start` runs; default .)
// It reads DATABASE_URL, else the checkout's embedded PostgreSQL (.airlock/postgres-password and
// the port in its postmaster.pid). Exit 1 when a Done-when figure fails.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";

const dir = resolve(process.argv[2] ?? ".");

function databaseUrl() {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const password = readFileSync(join(dir, ".airlock", "postgres-password"), "utf8").trim();
  const port = readFileSync(join(dir, ".airlock", "postgres", "postmaster.pid"), "utf8").split("\n")[3]?.trim();
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/airlock`;
}

// A failure the demo must not have: the internet, a missing commit, a missing command.
const outsideWorld = /resolve host|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|github\.com|is not in |not a commit|unknown revision|command not found|not installed|ENOENT|spawn .* ENOENT/i;

const client = new pg.Client({ connectionString: databaseUrl() });
await client.connect();
const q = async (sql) => (await client.query(sql)).rows;

const failed = await q(`
  SELECT r."number", r."title", (SELECT a."exitReason" FROM "DispatchAttempt" a WHERE a."runId" = r."id" ORDER BY a."number" DESC LIMIT 1) AS "why"
  FROM "AgentDispatchRun" r WHERE r."status" = 'failed' ORDER BY r."number"`);
const byStatus = await q(`SELECT "status", count(*)::int AS n FROM "AgentDispatchRun" GROUP BY 1 ORDER BY 1`);
const fixLoopEscalations = await q(`SELECT r."fullName" AS repo, s."branch" FROM "FixLoopState" s JOIN "Repository" r ON r."id" = s."repositoryId" WHERE s."escalatedAt" IS NOT NULL`);
const triage = await q(`SELECT "disposition", "action", count(*)::int AS n FROM "TriageDecision" GROUP BY 1, 2 ORDER BY 1, 2`);
const attribution = await q(`
  SELECT d."value" #>> '{}' AS kind, count(*)::int AS n FROM "PolicyDecision" d
  JOIN "PolicyVersion" v ON v."id" = d."policyVersionId" JOIN "Policy" p ON p."id" = v."policyId"
  WHERE p."kind" = 'attribution' GROUP BY 1 ORDER BY 1`);
const notifications = await q(`SELECT "kind", count(*)::int AS n FROM "Notification" GROUP BY 1 ORDER BY 1`);
const approvals = await q(`SELECT "action", "status", count(*)::int AS n FROM "ApprovalRequest" GROUP BY 1, 2 ORDER BY 1, 2`);
const failedWriteBacks = await q(`SELECT "kind", "error" FROM "WriteBack" WHERE "outcome" = 'failed' ORDER BY "createdAt"`);
await client.end();

const line = (rows) => rows.map((r) => Object.values(r).join(" ")).join("; ") || "none";
const bad = failed.filter((r) => outsideWorld.test(r.why ?? ""));
const kinds = new Set(attribution.map((a) => a.kind));
const checks = [
  ["no run failed for want of the internet, a commit or a command", bad.length === 0],
  ["at least one escalation", fixLoopEscalations.length > 0],
  ["an attribution of each kind (ours, pre_existing)", kinds.has("ours") && kinds.has("pre_existing")],
  ["notifications", notifications.length > 0],
];
process.stdout.write(
  [
    `runs by status: ${line(byStatus)}`,
    `failed runs (${failed.length}):`,
    ...failed.map((r) => `  #${r.number} ${r.title.slice(0, 70)} — ${r.why ?? "(no attempt)"}`),
    `fix-loop escalations: ${line(fixLoopEscalations)}`,
    `triage: ${line(triage)}`,
    `attributions: ${line(attribution)}`,
    `notifications: ${line(notifications)}`,
    `approvals: ${line(approvals)}`,
    `failed write-backs: ${line(failedWriteBacks)}`,
    "",
    ...checks.map(([what, ok]) => `${ok ? "ok  " : "FAIL"} ${what}`),
    "",
  ].join("\n"),
);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
