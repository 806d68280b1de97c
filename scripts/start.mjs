#!/usr/bin/env node
// `npm start`: the console with its database and a demo, from a fresh clone.
// Installs what is missing, builds when stale, starts PostgreSQL (embedded under
// .airlock/ unless DATABASE_URL is set), migrates, seeds the demo (idempotent),
// starts the worker and the web server, and prints the URL and the demo logins. Ctrl-C stops
// everything it started, PostgreSQL included.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkNode, ensureBuild, ensureDependencies, ensurePrismaClient, say } from "./lib/bootstrap.mjs";
import { repoRootPath as root } from "./lib/paths.mjs";
import { webServerArgs } from "./lib/web-server.mjs";

const t0 = Date.now();
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";
const children = [];
let stopping = false;

function fail(err) {
  process.stderr.write(`\n[airlock] ${err instanceof Error ? err.message : err}\n`);
  stop(1);
}

/** Stops children in reverse start order (web first, PostgreSQL last). */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  }
  process.exit(code);
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (!stopping) say("stopping…");
    stop(0);
  });
}

/** A per-installation secret kept in .airlock/<name> (made once, readable by this user only). */
function localSecret(name) {
  const dir = join(root, ".airlock");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
  return readFileSync(file, "utf8").trim();
}

/** Signs sessions. */
const authSecret = () => process.env.BETTER_AUTH_SECRET ?? localSecret("auth-secret");
/** GET /api/metrics answers only with it (production refuses every scrape without one). */
const metricsToken = () => process.env.AIRLOCK_METRICS_TOKEN ?? localSecret("metrics-token");

/**
 * Agents run in a bubblewrap sandbox (socat carries their egress proxy): without it, untrusted
 * attempts are refused. Says so once, with the one command that installs both.
 */
function sandboxCheck() {
  const ok = (cmd, args) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
  const bwrap = ok("bwrap", ["--version"]);
  const socat = ok("socat", ["-V"]);
  if (bwrap && socat) return null;
  return `  \x1b[33mNo agent sandbox on this machine\x1b[0m (${[!bwrap && "bubblewrap", !socat && "socat"].filter(Boolean).join(" and ")} missing): untrusted attempts are refused.\n  Install it with:  apt-get install -y bubblewrap socat\n`;
}

function startChild(name, cmd, args, env, { pipeStdout = false } = {}) {
  const child = spawn(cmd, args, { cwd: root, env, stdio: ["pipe", pipeStdout ? "pipe" : "inherit", "inherit"] });
  children.push(child);
  child.on("exit", (code, signal) => {
    if (!stopping) fail(`${name} exited unexpectedly (${signal ?? `exit ${code}`})`);
  });
  return child;
}

async function waitForHealth(url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the console did not become healthy at ${url}`);
}

try {
  checkNode();
  ensureDependencies();
  ensurePrismaClient();
  ensureBuild();

  const env = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
    AIRLOCK_URL: process.env.AIRLOCK_URL ?? `http://${host === "0.0.0.0" ? "localhost" : host}:${port}`,
    BETTER_AUTH_SECRET: authSecret(),
    AIRLOCK_METRICS_TOKEN: metricsToken(),
  };

  // PostgreSQL (embedded, unless DATABASE_URL is set), migrations and the demo seed.
  const db = startChild("PostgreSQL", process.execPath, ["scripts/with-db.mjs", "--persistent", "--seed", "--serve"], env, {
    pipeStdout: true,
  });
  env.DATABASE_URL = await new Promise((resolve, reject) => {
    let buf = "";
    db.stdout.setEncoding("utf8").on("data", (chunk) => {
      buf += chunk;
      const m = /^DATABASE_URL=(.+)$/m.exec(buf);
      if (m) resolve(m[1].trim());
    });
    db.once("exit", () => reject(new Error("PostgreSQL did not start (see the output above)")));
  });

  // One worker (queue, agent attempts, local CI, the demo bootstrap); production runs any number.
  // `node --import tsx` keeps it one process, so the supervisor's signals reach the worker itself.
  startChild(
    "worker",
    process.execPath,
    ["scripts/lib/supervised.mjs", process.execPath, "--import", "tsx", join("server", "queue", "worker.ts")],
    { ...env, AIRLOCK_DEMO_BOOTSTRAP: process.env.AIRLOCK_DEMO_BOOTSTRAP ?? "1" },
  );

  startChild(
    "web server",
    process.execPath,
    ["scripts/lib/supervised.mjs", process.execPath, ...webServerArgs({ host, port })],
    env,
  );
  const url = env.AIRLOCK_URL;
  await waitForHealth(`http://127.0.0.1:${port}/api/health`);

  const logins = JSON.parse(readFileSync(join(root, "prisma", "seed", "demo-logins.json"), "utf8"));
  const password = process.env.AIRLOCK_DEMO_PASSWORD ?? logins.defaultPassword;
  const external = !process.env.DATABASE_URL;
  process.stdout.write(
    [
      "",
      `  Airlock is running at \x1b[1m${url}\x1b[0m  (ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      "",
      "  Demo logins (password for all: " + password + "):",
      ...logins.users.map((u) => `    ${u.email.padEnd(28)} ${u.role}`),
      "",
      `  Database: ${external ? "embedded PostgreSQL" : "DATABASE_URL"} (${env.DATABASE_URL.replace(/:[^:@/]+@/, ":***@")})`,
      `  Metrics:  curl -H "Authorization: Bearer $${process.env.AIRLOCK_METRICS_TOKEN ? "AIRLOCK_METRICS_TOKEN" : "(cat .airlock/metrics-token)"}" ${url}/api/metrics`,
      "  Press Ctrl-C to stop.",
      "",
    ].join("\n") + "\n" + (sandboxCheck() ?? ""),
  );
} catch (err) {
  fail(err);
}
