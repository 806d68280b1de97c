// Sends realistic, signed GitHub deliveries to a running Airlock and reports what happened.
//
//   npm run simulate -- <scenario> [--url http://localhost:3000] [--secret S] [--count 20]
//
// Scenarios (all against the seeded demo repositories):
//   failed-check      an external CI check fails on acme/web-console PR #229
//   redelivery-storm  one delivery id sent --count times at once, plus --count distinct
//                     deliveries of the same failure: one run, the rest dropped as duplicates
//   comment           a maintainer comments "@agent fix failing check" on acme/payments-api #412
//   fork-pr           a pull request from a fork is opened and its check fails: the run is marked
//                     as a fork (untrusted pool, no secrets)
//
// The secret is GITHUB_WEBHOOK_SECRET (or --secret), the same the server was started with. With
// database access (DATABASE_URL, or the embedded PostgreSQL `npm start` runs) it also waits for
// the worker and prints the runs created and the triggers dropped.
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { failedCheckRun, prComment, pullRequestEvent, type Delivery } from "../server/domain/ingest/fixtures/deliveries";
import { signBody } from "../server/domain/ingest/signature";
import { persistentDataDir, persistentClusterUrl } from "./lib/postgres.mjs";

type Sent = { label: string; deliveryId: string; status: number; answer: string };
type Options = { url: string; secret: string; count: number };

const PAYMENTS = "acme/payments-api";
const CONSOLE = "acme/web-console";
const freshSha = () => randomBytes(20).toString("hex");
const freshId = () => randomUUID();

async function send(opts: Options, label: string, delivery: Delivery, deliveryId = freshId()): Promise<Sent> {
  const body = JSON.stringify(delivery.payload);
  const res = await fetch(new URL("/api/webhooks/github", opts.url), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/airlock-simulator",
      "x-github-event": delivery.event,
      "x-github-delivery": deliveryId,
      "x-hub-signature-256": signBody(opts.secret, body),
    },
    body,
  });
  const json = (await res.json().catch(() => ({}))) as { status?: string; error?: string; reason?: string };
  return { label, deliveryId, status: res.status, answer: json.status ?? json.error ?? "" };
}

const scenarios: Record<string, (opts: Options) => Promise<Sent[]>> = {
  "failed-check": async (opts) => [
    await send(opts, "check_run failure", failedCheckRun({ repo: CONSOLE, suiteId: rand(), checkRunId: rand(), name: "unit", appName: "Buildkite", headSha: freshSha(), headBranch: "notify-approvals", pr: { number: 229, headRef: "notify-approvals" } })),
  ],
  "redelivery-storm": async (opts) => {
    const failure = failedCheckRun({ repo: CONSOLE, suiteId: rand(), checkRunId: rand(), name: "lint", appName: "Buildkite", headSha: freshSha(), headBranch: "settings-rsc", pr: { number: 231, headRef: "settings-rsc" } });
    const sameId = freshId();
    return Promise.all([
      ...Array.from({ length: opts.count }, () => send(opts, "same delivery id", failure, sameId)),
      ...Array.from({ length: opts.count }, () => send(opts, "same failure, new id", failure)),
    ]);
  },
  comment: async (opts) => [
    await send(opts, "@agent fix failing check", prComment({ repo: PAYMENTS, number: 412, body: "@agent fix failing check", login: "mchen", association: "MEMBER", commentId: rand() })),
  ],
  "fork-pr": async (opts) => {
    const number = 900 + Math.floor(Math.random() * 99);
    const headSha = freshSha();
    const opened = await send(opts, `fork PR #${number} opened`, pullRequestEvent({ repo: PAYMENTS, action: "opened", number, title: "Handle negative refunds", body: "Drive-by fix from a fork.", headRef: "patch-1", headSha, fork: true, sender: "drive-by-contributor" }));
    await new Promise((r) => setTimeout(r, 1_000)); // let the PR record land before its check fails
    // GitHub's fork check suite: no head branch and no linked pull request; the commit links them.
    const failed = await send(opts, "check fails on the fork head", failedCheckRun({ repo: PAYMENTS, suiteId: rand(), checkRunId: rand(), name: "unit-tests", appName: "Buildkite", headSha, headBranch: null }));
    return [opened, failed];
  },
};

function rand() {
  return 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
}

function parseArgs(argv: string[]): { scenario: string | undefined; opts: Options } {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : argv[i + 1];
  };
  const scenario = argv.find((a, i) => !a.startsWith("--") && !(argv[i - 1] ?? "").startsWith("--"));
  return {
    scenario,
    opts: {
      url: get("url") ?? "http://localhost:3000",
      secret: get("secret") ?? process.env.GITHUB_WEBHOOK_SECRET ?? "",
      count: Number(get("count") ?? 20),
    },
  };
}

async function databaseUrl(): Promise<string | null> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  try {
    // `npm start`'s embedded PostgreSQL: port in its postmaster.pid, password beside the cluster.
    const dir = await persistentDataDir();
    const port = readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[3]?.trim();
    return port ? persistentClusterUrl(dir, port) : null;
  } catch {
    return null;
  }
}

async function report(sent: Sent[]): Promise<void> {
  const url = await databaseUrl();
  if (!url) return console.log("\n(no database access: set DATABASE_URL to see the runs created and triggers dropped)");
  const client = new pg.Client({ connectionString: url });
  await client.connect().catch(() => null);
  try {
    const ids = [...new Set(sent.filter((s) => s.status === 202).map((s) => s.deliveryId))];
    const deadline = Date.now() + 30_000;
    let pending = ids.length;
    while (pending > 0 && Date.now() < deadline) {
      const r = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "deliveryId" = ANY($1) AND "processedAt" IS NULL`, [ids]);
      pending = r.rows[0]?.n ?? 0;
      if (pending > 0) await new Promise((res) => setTimeout(res, 250));
    }
    if (pending > 0) console.log(`\n${pending} deliveries still wait for evaluation: is the worker running?`);
    const outcomes = await client.query<{ outcome: string; n: number; detail: string | null }>(
      `SELECT outcome, count(*)::int AS n, min(detail) AS detail FROM "WebhookDelivery" WHERE "deliveryId" = ANY($1) GROUP BY outcome ORDER BY outcome`,
      [ids],
    );
    console.log("\ndeliveries evaluated:");
    for (const o of outcomes.rows) console.log(`  ${String(o.n).padStart(4)} × ${o.outcome.padEnd(10)} ${o.detail ?? ""}`);
    const runs = await client.query<{ number: number; title: string; status: string; isFork: boolean }>(
      `SELECT DISTINCT r.number, r.title, r.status, r."isFork" FROM "RunEvent" e JOIN "AgentDispatchRun" r ON r.id = e."runId"
       WHERE e.type = 'trigger_matched' AND e.payload->>'deliveryId' = ANY($1) ORDER BY r.number`,
      [ids],
    );
    const drops = await client.query<{ duplicate: boolean; n: number }>(
      `SELECT ("runId" IS NOT NULL) AS duplicate, count(*)::int AS n FROM "TriggerDrop" WHERE "deliveryId" = ANY($1) GROUP BY 1`,
      [ids],
    );
    console.log(`\nruns created: ${runs.rows.length}`);
    for (const r of runs.rows) console.log(`  #${r.number} ${r.status.padEnd(10)} ${r.isFork ? "[fork] " : ""}${r.title}`);
    const dup = drops.rows.find((d) => d.duplicate)?.n ?? 0;
    const refused = drops.rows.find((d) => !d.duplicate)?.n ?? 0;
    console.log(`triggers dropped: ${dup} duplicate${dup === 1 ? "" : "s"}, ${refused} refused or not dispatched`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function main() {
  const { scenario, opts } = parseArgs(process.argv.slice(2));
  const run = scenario ? scenarios[scenario] : undefined;
  if (!run) {
    console.log(`usage: npm run simulate -- <${Object.keys(scenarios).join("|")}> [--url URL] [--secret S] [--count N]`);
    process.exit(scenario ? 1 : 0);
  }
  if (!opts.secret) {
    console.error("set GITHUB_WEBHOOK_SECRET (or --secret) to the secret the server was started with");
    process.exit(1);
  }
  const t0 = Date.now();
  const sent = await run(opts);
  console.log(`${scenario}: ${sent.length} deliveries to ${opts.url} in ${Date.now() - t0} ms`);
  const groups = new Map<string, number>();
  for (const s of sent) groups.set(`${s.label}: ${s.status} ${s.answer}`, (groups.get(`${s.label}: ${s.status} ${s.answer}`) ?? 0) + 1);
  for (const [line, n] of groups) console.log(`  ${String(n).padStart(4)} × ${line}`);
  if (sent.some((s) => s.status === 503)) console.log("\nthe server has no GITHUB_WEBHOOK_SECRET: restart it with one");
  await report(sent);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
