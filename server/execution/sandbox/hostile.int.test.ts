import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/server/db";
import { enqueue } from "@/server/queue/enqueue";
import { createExecRun, createLocalRepository, createPool, createStack, drain, scriptedSpec, testWorkerContext } from "@/server/queue/testing/fixtures";
import { dispatchRunTask } from "@/server/queue/tasks/dispatch-run";
import { createUser } from "@/server/testing/factories";

// A hostile agent, through the real command adapter and the real bubblewrap sandbox on this
// machine: one test per escape, each for a fork PR's run (untrusted pool) and a trusted run.
// Every escape must fail, and the run must say so (the agent's own report, the sandbox's
// events, the attempt's exit reason).

const hostile = resolve("server/execution/agents/fixtures/hostile.mjs");
const canary = `canary-${randomBytes(12).toString("hex")}`;
const tiers = [
  { name: "untrusted fork run", isFork: true },
  { name: "trusted run", isFork: false },
] as const;

let local: Awaited<ReturnType<typeof createLocalRepository>>;
let userId: string;
let allowedServer: Server;
let deniedServer: Server;
let webServer: Server;
let deniedHits = 0;
const port = (s: Server) => (s.address() as AddressInfo).port;
const listen = (handler: (res: import("node:http").ServerResponse) => void) =>
  new Promise<Server>((r) => {
    const s = createServer((_req, res) => handler(res));
    s.listen(0, "127.0.0.1", () => r(s));
  });

beforeAll(async () => {
  const user = await createUser();
  userId = user.id;
  local = await createLocalRepository({ files: { "README.md": "# hostile\n" }, members: [[user, "maintainer"]] });
  allowedServer = await listen((res) => res.end("hello from the allowed host"));
  deniedServer = await listen((res) => {
    deniedHits++;
    res.end("the denied host answered");
  });
  webServer = await listen((res) => res.end("airlock web"));
  await getDb().runnerPool.deleteMany({});
  const sandbox = {
    networkMode: "restricted" as const,
    allowedHosts: [`127.0.0.1:${port(allowedServer)}`],
    limits: { memoryLimitMb: 384, processLimit: 64 },
  };
  await createPool({ name: "hostile-trusted", trustTier: "trusted", ...sandbox });
  await createPool({ name: "hostile-untrusted", trustTier: "untrusted", ...sandbox });
  // Secrets a hostile agent would look for: a server secret no grant names, and a file in the data folder.
  process.env.AIRLOCK_SECRET_HOSTILE_CANARY = canary;
  await writeFile(join(local.dataDir, "auth-secret"), canary);
});

afterAll(async () => {
  delete process.env.AIRLOCK_SECRET_HOSTILE_CANARY;
  for (const s of [allowedServer, deniedServer, webServer]) s?.close();
});

const eventsOf = (runId: string) => getDb().runEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } });
const agentSaid = (events: { type: string; payload: unknown }[]) =>
  events.filter((e) => e.type === "message" && (e.payload as { role: string }).role === "assistant").map((e) => (e.payload as { text: string }).text);
const sandboxEvents = (events: { type: string; payload: unknown }[]) => events.filter((e) => e.type === "sandbox").map((e) => e.payload as Record<string, unknown>);

async function runHostile(isFork: boolean, argv: string[], opts: { whileRunning?: (runId: string, ctx: ReturnType<typeof testWorkerContext>) => Promise<void> } = {}) {
  const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", hostile, ...argv], env: [], outputFormat: "airlock" } }));
  const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: userId, isFork });
  const ctx = testWorkerContext({ dataDir: local.dataDir });
  await dispatchRunTask({ runId: run.id }, ctx);
  await opts.whileRunning?.(run.id, ctx);
  await drain(ctx);
  const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: { include: { runnerPool: true } } } });
  const events = await eventsOf(run.id);
  const transcript = JSON.stringify(events);
  // Every hostile run ran inside the sandbox of its tier's pool.
  expect(after.attempts[0]?.runnerPool?.name).toBe(isFork ? "hostile-untrusted" : "hostile-trusted");
  expect(sandboxEvents(events)[0]).toMatchObject({ phase: "started", kind: "bubblewrap", network: { mode: "restricted" } });
  // No server secret ever reaches the transcript, whatever the agent tried.
  expect(transcript).not.toContain(canary);
  const dbPassword = process.env.DATABASE_URL ? decodeURIComponent(new URL(process.env.DATABASE_URL).password) : "";
  if (dbPassword.length >= 16) expect(transcript).not.toContain(dbPassword);
  return { run, attempt: after.attempts[0]!, events, said: agentSaid(events) };
}

/** Whether a process whose command line holds `marker` runs anywhere on this machine. */
function runsAnywhere(marker: string): boolean {
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) && !/^\S+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) return true;
    } catch {
      /* gone */
    }
  }
  return false;
}

async function until(what: string, probe: () => Promise<boolean> | boolean, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(tiers)("a hostile agent in a $name", ({ isFork }) => {
  it("cannot read another process's environment (the worker's secrets)", async () => {
    const { said } = await runHostile(isFork, ["environ"]);
    expect(said).toContain("blocked: no server environment visible");
    // Its own pid namespace: only the sandbox's few processes are there to look at.
    const seen = said[0]!.split("\n").slice(1, -1);
    expect(seen.length).toBeLessThan(8);
  });

  it("finds no server secret in any file it can open", async () => {
    const { said } = await runHostile(isFork, ["files", join(local.dataDir, "auth-secret"), resolve(".env"), resolve("test-results/e2e-database-url")]);
    expect(said[0]).toMatch(/auth-secret gives \((ENOENT|EACCES)\)/);
    expect(said[0]).toMatch(/e2e-database-url gives \(ENOENT\)/);
    expect(said[0]).not.toContain(canary);
  });

  it("cannot connect to the database port or the web port on the host's loopback", async () => {
    const dbPort = new URL(process.env.DATABASE_URL!).port || "5432";
    const { said } = await runHostile(isFork, ["ports", dbPort, String(port(webServer))]);
    expect(said.at(-1)).toBe(`blocked: ${dbPort} ECONNREFUSED, ${port(webServer)} ECONNREFUSED`);
  });

  it("cannot write outside its workspace", async () => {
    const targets = [resolve("hostile-was-here"), join(local.dataDir, "hostile-was-here"), join(local.repoPath, "hooks", "pre-receive"), "/etc/hostile-was-here"];
    const { said } = await runHostile(isFork, ["write", ...targets]);
    expect(said.at(-1)).toMatch(/^blocked: /);
    for (const t of targets) expect(existsSync(t), t).toBe(false);
  });

  it("uses git in its worktree, but cannot write into the repository's objects or refs", async () => {
    const refBefore = readFileSync(join(local.repoPath, "refs", "heads", "main"), "utf8").trim();
    const { said } = await runHostile(isFork, ["git"]);
    expect(said[0]).toBe(`git status 0, head ${local.sha}, diff README.md | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)`);
    expect(said[1]).toMatch(/^blocked: commit \d+, update-ref \d+$/);
    expect(readFileSync(join(local.repoPath, "refs", "heads", "main"), "utf8").trim()).toBe(refBefore);
  });

  it("is not root and holds no capability", async () => {
    const { said } = await runHostile(isFork, ["root"]);
    expect(said.at(-1)).toBe("blocked: uid 1000, no capabilities (0000000000000000)");
  });

  it("cannot read /etc/shadow", async () => {
    const { said } = await runHostile(isFork, ["shadow"]);
    expect(said.at(-1)).toMatch(/^blocked: \/etc\/shadow \((EACCES|ENOENT)\)/);
  });

  it("a fork bomb is stopped at the process limit, and the attempt says so", async () => {
    const { attempt, events, said } = await runHostile(isFork, ["fork-bomb"]);
    expect(said.some((s) => s.startsWith("ESCAPED"))).toBe(false);
    expect(attempt.status).toBe("failed");
    expect(attempt.exitReason).toMatch(/^killed: process limit 64 \(\d+ processes and threads\)$/);
    expect(sandboxEvents(events).at(-1)).toMatchObject({ phase: "ended", limit: "processes", reason: attempt.exitReason });
  });

  it("a runtime that reserves address space (WebAssembly, as Node's fetch does) still runs under the memory limit", async () => {
    const { attempt, said } = await runHostile(isFork, ["wasm"]);
    expect(said).toEqual(["wasm: 65536 bytes"]);
    expect(attempt.status).toBe("succeeded");
  });

  it("allocating past the memory limit ends the attempt with the limit as its reason", async () => {
    const { attempt, events, said } = await runHostile(isFork, ["memory"]);
    expect(said.some((s) => s.startsWith("ESCAPED"))).toBe(false);
    expect(attempt.status).toBe("failed");
    expect(attempt.exitReason).toMatch(/^killed: memory limit 384 MiB \(\d+ MiB in use\)$/);
    expect(sandboxEvents(events).at(-1)).toMatchObject({ phase: "ended", limit: "memory" });
  });

  it("a detached daemon does not outlive the agent's exit", async () => {
    const marker = `hostile-daemon-${randomBytes(6).toString("hex")}`;
    const { said, attempt } = await runHostile(isFork, ["daemon", marker]);
    expect(said).toContain(`daemon started (${marker})`);
    expect(attempt.status).toBe("succeeded");
    await until("the daemon to be gone", () => !runsAnywhere(marker), 3000);
  });

  it("a detached daemon does not outlive a cancel", async () => {
    const marker = `hostile-daemon-${randomBytes(6).toString("hex")}`;
    const { attempt } = await runHostile(isFork, ["daemon", marker, "wait"], {
      whileRunning: async (runId, ctx) => {
        await until("the daemon to start", async () => agentSaid(await eventsOf(runId)).includes(`daemon started (${marker})`));
        expect(runsAnywhere(marker)).toBe(true);
        ctx.registry.stop(runId, "cancel", "cancelled by the test");
      },
    });
    expect(attempt.status).toBe("cancelled");
    await until("the daemon to be gone", () => !runsAnywhere(marker), 3000);
  });

  it("on a restricted network reaches the allowed host only; the blocked one is refused and shown", async () => {
    const allowed = `http://127.0.0.1:${port(allowedServer)}/`;
    const denied = `http://127.0.0.1:${port(deniedServer)}/`;
    const hitsBefore = deniedHits;
    const { said, events } = await runHostile(isFork, ["egress", allowed, denied]);
    expect(said).toContain("allowed: 200 hello from the allowed host");
    expect(said.find((s) => s.startsWith("denied:"))).toMatch(/^denied: 403 blocked by the Airlock sandbox/);
    expect(said).toContain("direct: ECONNREFUSED");
    expect(deniedHits).toBe(hitsBefore);
    const blocked = sandboxEvents(events).filter((e) => e.phase === "blocked");
    expect(blocked).toEqual([{ phase: "blocked", host: "127.0.0.1", port: port(deniedServer), at: expect.any(String), reason: "not in the allowlist" }]);
    expect(sandboxEvents(events).at(-1)).toMatchObject({ phase: "ended", blockedConnections: 1 });
  });
});

describe.each(tiers)("a hostile agent in a $name, when its worker is killed", ({ isFork }) => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  });

  it("leaves no detached daemon alive after a SIGKILL of the worker", async () => {
    const marker = `hostile-daemon-${randomBytes(6).toString("hex")}`;
    const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", hostile, "daemon", marker, "wait"], env: [], outputFormat: "airlock" } }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: userId, isFork });
    const worker = spawn(process.execPath, ["--import", "tsx", "server/queue/worker.ts"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, AIRLOCK_DATA_DIR: local.dataDir, AIRLOCK_DEMO_BOOTSTRAP: "0", AIRLOCK_WORKER_POLL_MS: "300" },
    });
    children.push(worker);
    await enqueue(getDb(), "run.dispatch", { runId: run.id });
    // The agent says so once its daemon runs (the marker is on the sandbox's own command line earlier).
    await until("the daemon to start", async () => agentSaid(await eventsOf(run.id)).includes(`daemon started (${marker})`), 60_000);
    worker.kill("SIGKILL");
    await until("the daemon to be gone", () => !runsAnywhere(marker), 3000);
    // A fresh worker process (tsx) plus the daemon's start: up to the minute waited above.
  }, 90_000);
});

describe("a machine without a working sandbox", () => {
  it("refuses a fork run at admission with the reason, shown on the run; nothing starts", async () => {
    const stack = await createStack(scriptedSpec({ adapter: { kind: "command", command: ["node", hostile, "root"], env: [], outputFormat: "airlock" } }));
    const run = await createExecRun({ repositoryId: local.repository.id, stack, sha: local.sha, actorUserId: userId, isFork: true });
    const reason = "sandbox unavailable: install bubblewrap (apt-get install -y bubblewrap socat)";
    const ctx = testWorkerContext({ dataDir: local.dataDir, sandbox: { available: false, reason } });
    await dispatchRunTask({ runId: run.id }, ctx);
    await drain(ctx);
    const after = await getDb().agentDispatchRun.findUniqueOrThrow({ where: { id: run.id }, include: { attempts: true } });
    expect(after.status).toBe("failed");
    expect(after.attempts[0]?.exitReason).toContain(reason);
    expect(after.admission).toMatchObject({ admitted: false, summary: expect.stringContaining(reason) });
    const events = await eventsOf(run.id);
    expect(events.some((e) => e.type === "sandbox")).toBe(false);
    expect(agentSaid(events)).toEqual([]);
  });
});
