#!/usr/bin/env node
// A `loop-<spec>` project's server (and the newcomer-walk project's): the web server AND a worker on one throwaway,
// seeded database (started by scripts/with-db.mjs), so specs under e2e/loop/
// can drive the whole loop: local CI, agent attempts, approvals, write-backs.
// The data directory (local forge, workspaces) is a fresh temp folder per run.
// SIGTERM stops both children; either one dying stops the other and fails us.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webServerArgs } from "../../scripts/lib/web-server.mjs";

const [port, name] = process.argv.slice(2);
if (!port || !name || !process.env.DATABASE_URL) throw new Error("usage: DATABASE_URL=... node e2e/loop/serve.mjs <port> <spec name>");

// The spec reads its server's database URL and data directory to check what reached the
// forge (e2e/db.ts: loopDb, loopDataDir).
const info = join("test-results", "e2e-loop", name);
mkdirSync(info, { recursive: true });
writeFileSync(join(info, "database-url"), process.env.DATABASE_URL);
const dataDir = mkdtempSync(join(tmpdir(), "airlock-e2e-loop-"));
writeFileSync(join(info, "data-dir"), dataDir);

// Specs that play GitHub's part get the GitHub API double (e2e/loop/github-double.ts): it is
// started first, on loopback ports of its own, and web and worker talk to it as to GitHub.
const WITH_GITHUB_DOUBLE = new Set(["repositories"]);
const children = [];
let github = null;
if (WITH_GITHUB_DOUBLE.has(name)) {
  const infoFile = join(info, "github-double.json");
  rmSync(infoFile, { force: true });
  children.push(spawn(process.execPath, ["--import", "tsx", join("e2e", "loop", "github-double.ts"), infoFile], { stdio: "inherit", env: process.env }));
  for (let waited = 0; !existsSync(infoFile); waited += 100) {
    if (waited > 60_000 || children[0].exitCode !== null) throw new Error("the GitHub double did not start");
    await new Promise((done) => setTimeout(done, 100));
  }
  github = JSON.parse(readFileSync(infoFile, "utf8"));
}

const WITH_SEEDED_FORGE = new Set(["newcomer-walk"]);
const env = {
  ...process.env,
  AIRLOCK_DATA_DIR: dataDir,
  AIRLOCK_DEMO_BOOTSTRAP: "1",
  // Loop specs drive the demo loop themselves; only the newcomer walk needs the story's scenes.
  AIRLOCK_DEMO_LOOP_ONLY: WITH_SEEDED_FORGE.has(name) ? "0" : "1",
  // Scripted agents replay at 20x so a loop takes seconds, not minutes.
  AIRLOCK_SCRIPTED_SPEED: process.env.AIRLOCK_SCRIPTED_SPEED ?? "20",
  AIRLOCK_WORKER_POLL_MS: "500",
  ...(github ? { GITHUB_API_URL: github.apiUrl, GITHUB_LOG_HOSTS: github.blobUrl } : {}),
};
// The newcomer walk (e2e/newcomer-walk.spec.ts) needs what `npm start` has: the forge's seeded
// histories in the server's own data directory (the flaky-test scene's branch among them). The
// seed is idempotent: the rows exist (with-db --seed); this writes the histories into dataDir.
// Loop specs start from an empty forge, as they always have.
if (WITH_SEEDED_FORGE.has(name)) execFileSync(process.execPath, ["--import", "tsx", join("prisma", "seed.ts")], { stdio: "inherit", env });
children.push(
  spawn(process.execPath, ["--import", "tsx", join("server", "queue", "worker.ts")], { stdio: "inherit", env }),
  spawn(process.execPath, webServerArgs({ port }), { stdio: "inherit", env }),
);

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
  setTimeout(() => {
    for (const c of children) c.kill("SIGKILL");
  }, 10_000).unref();
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => stop(0));
for (const c of children) c.on("exit", (code) => stop(stopping ? 0 : (code ?? 1) || 1));
