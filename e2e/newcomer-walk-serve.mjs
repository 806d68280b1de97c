#!/usr/bin/env node
// The newcomer-walk project's server: what `npm start` runs (web, worker with the demo bootstrap)
// on the throwaway database scripts/with-db.mjs started. Like a loop server (e2e/loop/serve.mjs)
// but the seed also writes its forge into the server's own data directory, as `npm start`'s seed
// does, so the demo bootstrap finds every seeded history (the flaky-test scene's branch included).
// The walk reads the database URL and data directory as a loop spec does (e2e/db.ts).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webServerArgs } from "../scripts/lib/web-server.mjs";

const [port, name] = process.argv.slice(2);
if (!port || !name || !process.env.DATABASE_URL) throw new Error("usage: DATABASE_URL=... node e2e/newcomer-walk-serve.mjs <port> <name>");
const info = join("test-results", "e2e-loop", name);
mkdirSync(info, { recursive: true });
writeFileSync(join(info, "database-url"), process.env.DATABASE_URL);
const dataDir = mkdtempSync(join(tmpdir(), "airlock-e2e-newcomer-"));
writeFileSync(join(info, "data-dir"), dataDir);

const env = { ...process.env, AIRLOCK_DATA_DIR: dataDir, AIRLOCK_DEMO_BOOTSTRAP: "1", AIRLOCK_SCRIPTED_SPEED: process.env.AIRLOCK_SCRIPTED_SPEED ?? "20", AIRLOCK_WORKER_POLL_MS: "500" };
// Idempotent: the rows exist (with-db --seed); this writes the forge's histories into dataDir.
execFileSync(process.execPath, ["--import", "tsx", join("prisma", "seed.ts")], { stdio: "inherit", env });
const children = [
  spawn(process.execPath, ["--import", "tsx", join("server", "queue", "worker.ts")], { stdio: "inherit", env }),
  spawn(process.execPath, webServerArgs({ port }), { stdio: "inherit", env }),
];

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  let left = children.filter((c) => c.exitCode === null && c.signalCode === null).length;
  const done = () => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(code);
  };
  if (left === 0) return done();
  for (const c of children) {
    c.once("exit", () => --left === 0 && done());
    c.kill("SIGTERM");
  }
  setTimeout(() => children.forEach((c) => c.kill("SIGKILL")), 10_000).unref();
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => stop(0));
for (const c of children) c.on("exit", (code) => stop(stopping ? 0 : (code ?? 1) || 1));
