import { readdirSync } from "node:fs";
import { defineConfig } from "@playwright/test";
import { webServerCommand } from "./scripts/lib/web-server.mjs";
import { E2E_METRICS_TOKEN, E2E_WEBHOOK_SECRET } from "./e2e/metrics-token";

const PORT = Number(process.env.E2E_PORT ?? 3100);
// Each spec under e2e/loop/ drives the whole loop on the demo repository (its check, its runs,
// its approvals), so each gets its own project and server (web + worker + database) on the
// ports after PORT: one spec's approvals or rejections never change another's starting state.
const loops = readdirSync("e2e/loop")
  .filter((f) => f.endsWith(".spec.ts"))
  .sort()
  .map((file, i) => ({ name: file.replace(/\.spec\.ts$/, ""), file, port: PORT + 1 + i }));
// The newcomer walk's scenes need what `npm start` runs: a worker that bootstraps the demo. Its
// project gets a server of its own (e2e/loop/serve.mjs, with the forge seeded) on the port after the loops'.
const NEWCOMER = { name: "newcomer-walk", port: PORT + 1 + loops.length };

/** Servers with a worker (e2e/loop/serve.mjs): one per loop spec, and the newcomer walk's. */
const workerServers = [...loops.map((l) => ({ project: `loop-${l.name}`, name: l.name, port: l.port })), { project: NEWCOMER.name, ...NEWCOMER }];

// `--project X` (or `--project=X`, repeated, `*` as a wildcard) starts only X's server: each one
// brings a database and a seed, and starting all of them for one spec takes minutes here.
// Without the flag every server starts, as in `npm test`.
const projectArgs = process.argv.flatMap((arg, i, all) => (arg === "--project" ? [all[i + 1] ?? ""] : arg.startsWith("--project=") ? [arg.slice("--project=".length)] : []));
const projectPatterns = projectArgs.map((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i"));
const selected = (project: string) => projectPatterns.length === 0 || projectPatterns.some((re) => re.test(project));

const serverEnv = {
  NODE_ENV: "production",
  NEXT_TELEMETRY_DISABLED: "1",
  BETTER_AUTH_SECRET: "e2e-secret-not-for-production-0123456789",
  // Production refuses every metrics scrape without a token (e2e/console.spec.ts sends this one).
  AIRLOCK_METRICS_TOKEN: E2E_METRICS_TOKEN,
  // Deliveries are signed as GitHub signs them (e2e/deliveries.spec.ts).
  GITHUB_WEBHOOK_SECRET: E2E_WEBHOOK_SECRET,
  DATABASE_URL: "",
};

export default defineConfig({
  testDir: "./e2e",
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    trace: "retain-on-failure",
    launchOptions: {
      // Debian's chromium: Playwright never downloads a browser here.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [
    // Pages against a seeded database with no worker: nothing changes unless a spec changes it.
    { name: "chromium", testIgnore: "loop/**", use: { browserName: "chromium" } },
    // The newcomer walk's scenes (e2e/newcomer-walk.spec.ts), on a server with a worker and the demo bootstrap.
    { name: NEWCOMER.name, testMatch: "newcomer-walk.spec.ts", use: { browserName: "chromium", baseURL: `http://127.0.0.1:${NEWCOMER.port}` } },
    // The whole loop (local CI, agent attempts, approvals, write-backs) with a running worker.
    ...loops.map((l) => ({
      name: `loop-${l.name}`,
      testMatch: `loop/${l.file}`,
      use: { browserName: "chromium" as const, baseURL: `http://127.0.0.1:${l.port}` },
    })),
  ],
  // Playwright starts webServer before globalSetup, so the server command brings
  // its own throwaway, migrated and seeded database.
  webServer: [
    ...(selected("chromium") ? [{
      // The database URL goes to a file the specs read to append run events as a
      // worker would (e2e/db.ts); nothing over HTTP can write events.
      command: `node scripts/with-db.mjs --seed -- sh -c 'mkdir -p test-results && printf %s "$DATABASE_URL" > test-results/e2e-database-url && exec ${webServerCommand({ port: PORT })}'`,
      url: `http://127.0.0.1:${PORT}/api/health`,
      timeout: 120_000,
      reuseExistingServer: false,
      stdout: "pipe" as const,
      stderr: "pipe" as const,
      env: { ...serverEnv, AIRLOCK_URL: `http://127.0.0.1:${PORT}` },
      gracefulShutdown: { signal: "SIGTERM" as const, timeout: 10_000 },
    }] : []),
    ...workerServers.filter((w) => selected(w.project)).map((w) => ({
      command: `node scripts/with-db.mjs --seed -- node e2e/loop/serve.mjs ${w.port} ${w.name}`,
      url: `http://127.0.0.1:${w.port}/api/health`,
      timeout: 180_000,
      reuseExistingServer: false,
      stdout: "pipe" as const,
      stderr: "pipe" as const,
      env: { ...serverEnv, AIRLOCK_URL: `http://127.0.0.1:${w.port}` },
      gracefulShutdown: { signal: "SIGTERM" as const, timeout: 15_000 },
    })),
  ],
});
