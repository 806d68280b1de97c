import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { webServerCommand } from "../../scripts/lib/web-server.mjs";

// The production server under test: `node scripts/with-db.mjs -- node --import tsx server/web/serve.ts`
// on a free port with its own throwaway PostgreSQL, plus a signed-in admin.

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export type BenchServer = {
  base: string;
  databaseUrl: string;
  db: pg.Client;
  cookie: string;
  /** PIDs of the web server process(es), for RSS. */
  serverPids: () => number[];
  stop: () => Promise<void>;
};

const children = (pid: number): number[] => {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry), ...children(Number(entry)));
    } catch {
      // the process exited meanwhile
    }
  }
  return out;
};

/** Resident memory of processes, in bytes. */
export function rssOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // exited
    }
  }
  return total;
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe().catch(() => null);
    if (got !== null) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

export async function startServer(root: string): Promise<BenchServer> {
  if (!existsSync(join(root, ".next", "BUILD_ID"))) {
    throw new Error("No production build: run `npm run build` first.");
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "airlock-bench-"));
  const urlFile = join(dir, "database-url");
  const child: ChildProcess = spawn(
    process.execPath,
    // BENCH_SERVER_NODE_ARGS passes flags to the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    ["scripts/with-db.mjs", "--", "sh", "-c", `printf %s "$DATABASE_URL" > '${urlFile}' && exec ${webServerCommand({ port }).replace(/^node /, `node ${process.env.BENCH_SERVER_NODE_ARGS ?? ""} `)}`],
    {
      cwd: root,
      stdio: ["pipe", "ignore", "pipe"],
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
        DATABASE_URL: "",
        AIRLOCK_URL: base,
        BETTER_AUTH_SECRET: "bench-secret-not-for-production-0123456789",
        AIRLOCK_LOG_LEVEL: "error",
        // The 1,000 viewers are one signed-in account here; the per-account cap is not what is measured.
        AIRLOCK_MAX_STREAMS_PER_USER: "5000",
        // The bench signs its own admin up (accounts are by invitation otherwise).
        AIRLOCK_EMAIL_SIGN_UP: "1",
      },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitFor("the server", 180_000, async () => ((await fetch(`${base}/api/health`)).ok ? true : null));
  } catch (err) {
    child.kill("SIGTERM");
    throw new Error(`${(err as Error).message}\n${stderr}`);
  }
  const databaseUrl = readFileSync(urlFile, "utf8").trim();
  rmSync(dir, { recursive: true, force: true });
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();

  // An admin, signed up and in through the real auth endpoints.
  const email = `bench-${Date.now()}@airlock.local`;
  const password = "bench-password-123";
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify({ email, password, name: "Bench" }),
  });
  if (!up.ok) throw new Error(`sign-up failed: ${up.status} ${await up.text()}`);
  await db.query(`UPDATE "User" SET "isAdmin" = true WHERE "email" = $1`, [email]);
  const cookie = up.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");

  return {
    base,
    databaseUrl,
    db,
    cookie,
    serverPids: () => children(child.pid!).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("server/web/serve");
      } catch {
        return false;
      }
    }),
    stop: async () => {
      await db.end().catch(() => {});
      child.stdin?.end();
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    },
  };
}
