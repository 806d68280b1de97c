#!/usr/bin/env node
// Gives a command a migrated PostgreSQL.
//
//   node scripts/with-db.mjs [--persistent] [--seed] -- <command...>
//       start PostgreSQL (unless DATABASE_URL is set), migrate, optionally seed,
//       run the command with DATABASE_URL set, stop PostgreSQL, exit with its code.
//   node scripts/with-db.mjs [--persistent] [--seed] --serve
//       the same, then print "DATABASE_URL=<url>" and keep PostgreSQL running
//       until SIGINT/SIGTERM or until stdin closes (the parent died).
//
// Without --persistent the cluster is throwaway (a temp folder, deleted on stop);
// with it, the cluster lives under .airlock/ (see scripts/lib/postgres.mjs).
// PostgreSQL always lives in this process, never inside a test runner.
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { installQueueSchema, migrate } from "../server/db/migrator.mjs";
import { repoRoot, startPostgres } from "./lib/postgres.mjs";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const opts = sep === -1 ? argv : argv.slice(0, sep);
const cmd = sep === -1 ? [] : argv.slice(sep + 1);
const log = (line) => process.stderr.write(`[db] ${line}\n`);

export async function runSeed(url) {
  const tsx = join(repoRoot, "node_modules", ".bin", "tsx");
  await new Promise((resolve, reject) => {
    const child = spawn(tsx, [join(repoRoot, "prisma", "seed.ts")], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DATABASE_URL: url },
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`seed failed (exit ${code})`))));
  });
}

const t0 = Date.now();
let db = null;
let url = process.env.DATABASE_URL;
if (!url) {
  db = await startPostgres({ persistent: opts.includes("--persistent"), log });
  url = db.url;
  log(`PostgreSQL ${db.port} ready (data: ${db.dataDir})`);
}
await migrate({ connectionString: url, log });
await installQueueSchema(url);
if (opts.includes("--seed")) await runSeed(url);
log(`database ready in ${Date.now() - t0} ms`);

let stopping = false;
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  if (db) {
    await db.stop().catch((e) => log(`stop failed: ${e}`));
    // A throwaway cluster's folder goes too, even when PostgreSQL was killed before stop().
    if (!opts.includes("--persistent")) await rm(db.dataDir, { recursive: true, force: true }).catch(() => {});
  }
  process.exit(code);
}

if (opts.includes("--serve")) {
  process.stdout.write(`DATABASE_URL=${url}\n`);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => shutdown(0));
  process.stdin.on("end", () => shutdown(0)).on("error", () => shutdown(0)).resume();
} else if (cmd.length === 0) {
  process.stdout.write(`${url}\n`);
  await shutdown(0);
} else {
  const child = spawn(cmd[0], cmd.slice(1), { stdio: "inherit", env: { ...process.env, DATABASE_URL: url } });
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => !stopping && child.kill(sig));
  child.on("exit", (code, signal) => shutdown(code ?? (signal ? 1 : 0)));
}
