import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIsCurrent } from "./lib/bootstrap.mjs";
import { freePort, persistentClusterUrl } from "./lib/postgres.mjs";

// `npm start` end to end, on a fresh copy of the checkout: start, health, Ctrl-C,
// no PostgreSQL left; a second start seeds nothing twice; a crash (SIGKILL) of
// the bootstrap leaves nothing that breaks the next start; and with DATABASE_URL
// it uses that server and starts none. Dependencies and the build are linked
// from this checkout so the test measures the bootstrap, not `npm ci`.

const repo = join(dirname(new URL(import.meta.url).pathname), "..");
let copy: string;

// The copy sits in a 0700 folder, as a checkout in root's home does: as root, the
// `postgres` OS user cannot reach it, so the cluster must live elsewhere.
function freshCopy(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "airlock-start-")), "checkout");
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repo, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(repo, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(repo, f), join(dir, f), { preserveTimestamps: true });
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  if (existsSync(join(repo, ".next"))) symlinkSync(join(repo, ".next"), join(dir, ".next"));
  return dir;
}

type Started = { proc: ChildProcess; output: () => string; dbPort: number; port: number; dataDir: string };

async function start(env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const proc = spawn(process.execPath, ["scripts/start.mjs"], {
    cwd: copy,
    env: { ...process.env, DATABASE_URL: "", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up:\n${out}`)), 280_000);
    proc.stdout!.on("data", () => {
      if (out.includes("Airlock is running at")) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}):\n${out}`));
    });
  });
  const dbPort = Number(/127\.0\.0\.1:(\d+)\/airlock/.exec(out)?.[1] ?? 0);
  const dataDir = /\(data: ([^)]+)\)/.exec(out)?.[1] ?? "";
  return { proc, output: () => out, dbPort, port, dataDir };
}

async function stopWith(s: Started, signal: NodeJS.Signals) {
  const exited = new Promise<number | null>((r) => s.proc.once("exit", (code) => r(code)));
  s.proc.kill(signal);
  return exited;
}

/** PostgreSQL processes serving a data folder under `dir`. */
function postgresUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
      if (cmd.includes("postgres") && cmd.includes(dir)) pids.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return pids;
}

async function countRuns(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query(`SELECT count(*)::int AS n FROM "AgentDispatchRun"`);
  await c.end();
  return rows[0].n as number;
}

const waitGone = async (dir: string) => {
  for (let i = 0; i < 100 && postgresUnder(dir).length; i++) await new Promise((r) => setTimeout(r, 100));
  return postgresUnder(dir);
};

describe("npm start", () => {
  beforeAll(() => {
    // The copy links this checkout's .next: a stale build would make the copy rebuild into it
    // (and Turbopack cannot build through a linked node_modules). npm test builds first.
    if (!buildIsCurrent()) throw new Error("the production build is stale or missing: run `npm run build` first (npm test does)");
    copy = freshCopy();
  });
  const dataDirs = new Set<string>();
  afterAll(() => {
    if (!copy) return;
    for (const dir of [copy, ...dataDirs]) for (const pid of postgresUnder(dir)) process.kill(pid, "SIGKILL");
    rmSync(dirname(copy), { recursive: true, force: true });
    for (const dir of dataDirs) if (!dir.startsWith(copy)) rmSync(dirname(dir), { recursive: true, force: true });
  });

  it("starts, serves /api/health, and Ctrl-C stops everything, PostgreSQL included", async () => {
    // Without the demo's CI bootstrap: its worker adds runs as the demo's checks fail, at times of
    // its own, and this compares the seed's runs across two starts.
    const quiet = { AIRLOCK_DEMO_BOOTSTRAP: "0" };
    const s = await start(quiet);
    dataDirs.add(s.dataDir);
    expect(s.output()).toMatch(/maintainer@airlock\.local/);
    if (process.getuid?.() === 0) expect(s.dataDir).toMatch(/^\/var\/tmp\/airlock-[0-9a-f]{12}\/postgres$/);
    else expect(s.dataDir).toBe(join(copy, ".airlock", "postgres"));
    const health = await fetch(`http://127.0.0.1:${s.port}/api/health`);
    expect(health.status).toBe(200);
    // Its own random password, beside the cluster, readable by its owner only; the old constant is refused.
    const passwordFile = join(dirname(s.dataDir), "postgres-password");
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(passwordFile, "utf8").trim()).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await expect(countRuns(`postgresql://postgres:airlock@127.0.0.1:${s.dbPort}/airlock`)).rejects.toThrow(/password authentication failed/);
    const runs = await countRuns(persistentClusterUrl(s.dataDir, s.dbPort));
    expect(runs).toBeGreaterThan(10);
    expect(await stopWith(s, "SIGINT")).toBe(0);
    expect(await waitGone(s.dataDir)).toEqual([]);

    // A second start keeps the data and seeds nothing twice.
    const again = await start(quiet);
    expect(again.dataDir).toBe(s.dataDir);
    expect(await countRuns(persistentClusterUrl(again.dataDir, again.dbPort))).toBe(runs);
    expect(await stopWith(again, "SIGINT")).toBe(0);
    expect(await waitGone(s.dataDir)).toEqual([]);
  }, 600_000);

  it("recovers from a crashed bootstrap (SIGKILL): nothing left running, the next start works", async () => {
    const s = await start();
    dataDirs.add(s.dataDir);
    await stopWith(s, "SIGKILL");
    expect(await waitGone(s.dataDir)).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${s.port}/api/health`)).rejects.toThrow();
    const next = await start();
    expect((await fetch(`http://127.0.0.1:${next.port}/api/health`)).status).toBe(200);
    expect(await stopWith(next, "SIGINT")).toBe(0);
    expect(await waitGone(s.dataDir)).toEqual([]);
  }, 600_000);

  const systemPg = ["18", "17", "16", "15"].map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(join(d, "initdb")));

  it.skipIf(!systemPg || process.getuid?.() !== 0)("with DATABASE_URL, uses that server and starts none", async () => {
    const data = mkdtempSync(join(tmpdir(), "airlock-syspg-"));
    execFileSync("chown", ["postgres", data]);
    const as = (cmd: string, args: string[]) =>
      spawnSync("runuser", ["-u", "postgres", "--", join(systemPg!, cmd), ...args], { encoding: "utf8" });
    const port = await freePort();
    expect(as("initdb", ["-D", join(data, "d"), "-A", "trust", "-U", "postgres"]).status).toBe(0);
    const up = as("pg_ctl", ["-D", join(data, "d"), "-o", `-p ${port} -k ${data} -c listen_addresses=127.0.0.1`, "-w", "start", "-l", join(data, "log")]);
    expect(up.status, up.stderr).toBe(0);
    try {
      const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
      const s = await start({ DATABASE_URL: url });
      expect((await fetch(`http://127.0.0.1:${s.port}/api/health`)).status).toBe(200);
      expect(await countRuns(url)).toBeGreaterThan(10);
      expect(s.dataDir).toBe(""); // no embedded cluster was started
      for (const dir of [copy, ...dataDirs]) expect(postgresUnder(dir)).toEqual([]);
      expect(await stopWith(s, "SIGINT")).toBe(0);
      // The external server keeps running: Airlock never stops what it did not start.
      expect(await countRuns(url)).toBeGreaterThan(10);
    } finally {
      as("pg_ctl", ["-D", join(data, "d"), "-m", "fast", "stop"]);
      rmSync(data, { recursive: true, force: true });
    }
  }, 600_000);
});
