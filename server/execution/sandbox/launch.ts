import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { lstatSync, readFileSync } from "node:fs";
import { chmod, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { promisify } from "node:util";
import { bwrapArgs, proxyEnvironment, sandboxModelBaseUrl, sandboxUid } from "./bwrap-args";
import { type BlockedConnection, startEgressProxy } from "./egress-proxy";
import { type GatewayUsage, type ModelGatewaySpec, placeholderKey, startModelGateway } from "./model-gateway";
import type { SandboxEnded, SandboxStarted } from "./events";
import { recordSandbox } from "./lifetime";
import { type LimitHit, pidNamespaceOf, processesIn, processTree, startMonitor } from "./monitor";
import { describeLimit, type SandboxLimits, type SandboxNetwork } from "./policy";
import { probeSandbox, sandboxesRunAsOtherUser } from "./probe";
import { systemEntries } from "./system";

// The one way an agent process is started: inside a bubblewrap sandbox, or (only where an admin
// let a trusted pool run without one) as a plain child. Either way the caller gets the process,
// a way to signal everything it started, and at exit what the sandbox saw (blocked
// connections, the limit that ended it, peak usage). The command adapter calls this; so will
// the Claude Code adapter.

/** What --as allows over the memory limit (see the rlimits below). */
const addressSpaceHeadroomMb = 16 * 1024;

export type SandboxSpec = {
  argv: string[];
  /** The agent's whole environment (nothing of the worker's is added). */
  env: Record<string, string>;
  cwd: string;
  /** Bound read-write (the workspace, artifacts, HOME, a worktree's git folder). Must exist. */
  writablePaths: string[];
  /** Bound read-only besides the system folders (the context file, the repository's objects). */
  readOnlyPaths: string[];
  /** Masked inside the read-only binds (the data folder, .env files). */
  hiddenPaths: string[];
  network: SandboxNetwork;
  limits: SandboxLimits;
  /** A private scratch folder of this session; /tmp is made in it. */
  sessionDir: string;
  /** Where live sandboxes are recorded, for the reaper of a later worker. */
  stateDir: string;
  onBlocked?: (blocked: BlockedConnection) => void;
  onLimit?: (hit: LimitHit) => void;
  /**
   * The model API, reached through Airlock's gateway: in a sandbox the agent gets the gateway's
   * address and a placeholder key, and the key stays with the worker; without one (an admin's
   * unsandboxed trusted pool) the agent gets the upstream and the key itself.
   */
  modelGateway?: ModelGatewaySpec;
  /**
   * The per-process address-space backstop, when the default (the memory limit plus headroom) is
   * too tight: a test runner's workers each reserve WebAssembly memories of about 10 GiB. The
   * memory limit itself still holds (the monitor measures what is used).
   */
  addressSpaceMb?: number;
  /** Each model answer's usage, as the model API sent it through the gateway (sandboxed only). */
  onModelUsage?: (usage: GatewayUsage) => void;
};

export type LaunchRequest = ({ kind: "bubblewrap" } | { kind: "none"; reason: string }) & SandboxSpec;

/** How the process ended: its exit code, or the signal that killed it. */
export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

export type SandboxedProcess = {
  readonly stdin: Writable;
  /**
   * The process's output, read from the moment it was spawned: Node drops the output of a child
   * nobody reads when it exits, and emits its exit once, so a process that ended while the
   * launch was still setting up (a fast check, a command that failed at once) would otherwise
   * lose its output and never be seen to exit.
   */
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves when the process exits (seen from spawn on). */
  readonly exited: Promise<ProcessExit>;
  /** Resolves once the process exited and both outputs were read to their end (resume() one you do not need). */
  readonly closed: Promise<ProcessExit>;
  /** Stops reading the output: for a descendant (outside a sandbox) that holds it open after the exit. */
  stopReading(): void;
  /** What the sandbox enforces, for the `sandbox` run event. */
  readonly started: SandboxStarted;
  /** SIGTERM: to every process inside. SIGKILL: ends the sandbox and all it holds. */
  signal(sig: "SIGTERM" | "SIGKILL"): void;
  readonly limitHit: LimitHit | null;
  /**
   * After the process exited (with `exitSignal` when a signal killed the agent): stops
   * watching, closes the proxy, kills any leftover. A kernel limit's signal (SIGXCPU, SIGXFSZ)
   * counts as that limit ending the attempt.
   */
  finish(exitSignal?: NodeJS.Signals | null): Promise<SandboxEnded>;
};

export class SandboxLaunchError extends Error {}

const run = promisify(execFile);
let uidCounter = 0;

/** A host uid of its own for each sandbox (as root): its processes are counted and owned apart. */
function hostUidFor(): number {
  return 2_000_000 + (process.pid % 100_000) * 8 + (uidCounter++ % 8);
}

/** Files under /etc no agent reads, masked even though the sandbox user could not read them anyway. */
const etcSecrets = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers"];

const exists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/**
 * bubblewrap, running as the sandbox's uid, must reach each folder it binds: an ancestor
 * without search permission for others (a 0700 temporary folder) gets it (search only: its
 * listing stays private, and nothing of it is visible inside the sandbox but the binds).
 */
async function ensureSearchable(paths: string[], uid: number): Promise<void> {
  const done = new Set<string>();
  for (const p of paths) {
    for (let dir = dirname(p); !done.has(dir); dir = dirname(dir)) {
      done.add(dir);
      const info = await stat(dir).catch(() => null);
      if (info && info.uid !== uid && (info.mode & 0o001) === 0) await chmod(dir, (info.mode & 0o7777) | 0o001);
      if (dir === "/") break;
    }
  }
}

export async function launchAgentProcess(req: LaunchRequest): Promise<SandboxedProcess> {
  if (req.kind === "none") return launchUnsandboxed(req);
  const availability = await probeSandbox();
  if (!availability.available) throw new SandboxLaunchError(availability.reason);

  const id = randomUUID();
  const tmpDir = join(req.sessionDir, "tmp");
  await mkdir(tmpDir, { recursive: true });
  const hostUid = sandboxesRunAsOtherUser() ? hostUidFor() : null;
  if (hostUid !== null) {
    // As root, the sandbox runs as a uid of its own: it owns its writable folders, nothing else.
    await run("chown", ["-R", `${hostUid}:${hostUid}`, req.sessionDir, ...req.writablePaths], { timeout: 120_000 });
    await ensureSearchable([req.sessionDir, ...req.writablePaths, ...req.readOnlyPaths], hostUid);
  }

  const blocked: BlockedConnection[] = [];
  let blockedCount = 0;
  const onBlocked = (b: BlockedConnection) => {
    blockedCount++;
    if (blocked.length < 500) blocked.push(b);
    req.onBlocked?.(b);
  };
  const proxySocket = req.network.mode === "none" ? null : join(req.sessionDir, "egress.sock");
  const proxy = proxySocket
    ? await startEgressProxy({ socketPath: proxySocket, mode: req.network.mode as "restricted" | "open", allowedHosts: req.network.allowedHosts, onBlocked })
    : null;
  const modelSocket = req.modelGateway ? join(req.sessionDir, "model.sock") : null;
  let gateway: Awaited<ReturnType<typeof startModelGateway>> | null = null;
  try {
    gateway = modelSocket && req.modelGateway ? await startModelGateway(modelSocket, req.modelGateway, req.onModelUsage) : null;
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  const closeForwarded = async () => {
    await proxy?.close();
    await gateway?.close();
  };

  const statusFd = 3;
  const args = bwrapArgs({
    argv: req.argv,
    cwd: req.cwd,
    system: systemEntries(),
    readOnly: [...new Set([dirname(dirname(process.execPath)), ...req.readOnlyPaths])].filter((p) => !["/usr", "/"].includes(p) && exists(p)),
    writable: req.writablePaths,
    hiddenDirs: req.hiddenPaths.filter((p) => exists(p) && lstatSync(p).isDirectory()),
    hiddenFiles: [...etcSecrets, ...req.hiddenPaths].filter((p) => exists(p) && !lstatSync(p).isDirectory()),
    tmpDir,
    proxySocket,
    modelSocket,
    socatPath: availability.socat,
    statusFd,
  });
  const { limits } = req;
  const mib = 1024 * 1024;
  const rlimits = [
    // Address space per process: a backstop only, far over the memory limit, because runtimes
    // reserve far more than they touch: V8 reserves about 10 GiB for each WebAssembly memory
    // (Node's fetch parses HTTP with one), so a bound near the limit kills any agent that makes
    // a request. The monitor holds the sandbox as a whole to the memory limit itself.
    `--as=${(req.addressSpaceMb ?? limits.memoryMb + addressSpaceHeadroomMb) * mib}`,
    `--nproc=${limits.processes}`,
    `--cpu=${limits.cpuSeconds + 5}:${limits.cpuSeconds + 10}`,
    `--fsize=${limits.diskMb * mib}`,
  ];
  const env = {
    ...req.env,
    ...(proxySocket ? proxyEnvironment() : {}),
    ...(req.modelGateway ? { [req.modelGateway.baseUrlVariable]: sandboxModelBaseUrl, [req.modelGateway.keyVariable]: placeholderKey } : {}),
  };
  let child: ChildProcess;
  let stdio: ReturnType<typeof captureStdio>;
  let initPid$: Promise<number | null>;
  try {
    child = spawn(availability.prlimit, [...rlimits, "--", availability.bwrap, ...args], {
      // The environment goes to bubblewrap (and through it to the agent) unseen: never on a command line.
      env: env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      detached: true,
      ...(hostUid !== null ? { uid: hostUid, gid: hostUid } : {}),
    });
    stdio = captureStdio(child);
    initPid$ = initPidOf(child.stdio[statusFd] as Readable | null, stdio.exited);
    await spawned(child);
  } catch (err) {
    await closeForwarded();
    throw err;
  }
  // Recorded at once (its namespace once known), so a worker killed even now leaves it to the reaper.
  const outerPid = child.pid!;
  let forget: (() => Promise<void>) | null = await recordSandbox(req.stateDir, id, outerPid, null).catch(() => null);

  let limitHit: LimitHit | null = null;
  let monitor: ReturnType<typeof startMonitor> | null = null;
  let namespace: string | null = null;
  let finished = false;
  const killAll = (sig: NodeJS.Signals, keepInit: boolean) => {
    // The agent itself first, at once (the init's children), then everything else in the namespace.
    if (initPid !== null) {
      try {
        for (const pid of readFileSync(`/proc/${initPid}/task/${initPid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) process.kill(Number(pid), sig);
      } catch {
        /* gone */
      }
    }
    // SIGTERM: the init's descendants (cheap, while it lives). SIGKILL: the whole namespace, to be sure.
    const targets = sig === "SIGKILL" ? (namespace ? processesIn(namespace) : Promise.resolve([] as number[])) : initPid !== null ? processTree(initPid) : Promise.resolve([] as number[]);
    void targets.then((pids) => {
      for (const pid of pids) {
        if (keepInit && pid === initPid) continue;
        try {
          process.kill(pid, sig);
        } catch {
          /* gone */
        }
      }
    });
  };
  let initPid: number | null = null;
  const signal = (sig: "SIGTERM" | "SIGKILL") => {
    if (sig === "SIGKILL") {
      try {
        if (child.pid) process.kill(child.pid, "SIGKILL"); // bubblewrap: its init and every process inside die with it
      } catch {
        /* gone */
      }
      killAll("SIGKILL", false);
    } else killAll("SIGTERM", true);
  };

  const ready = initPid$.then(async (pid) => {
    if (pid === null) return; // it exited first: the kernel ended whatever its namespace held
    initPid = pid;
    namespace = await pidNamespaceOf(pid);
    if (!namespace) return;
    if (!finished) {
      monitor = startMonitor({
        initPid: pid,
        limits,
        diskPaths: [...req.writablePaths, tmpDir],
        onLimit: (hit) => {
          limitHit = hit;
          req.onLimit?.(hit);
          signal("SIGKILL");
        },
      });
    }
    forget = (await recordSandbox(req.stateDir, id, outerPid, namespace).catch(() => null)) ?? forget;
  });

  // The session starts once the sandbox's init runs and is watched and recorded (or it exited).
  await ready;

  const started: SandboxStarted = {
    phase: "started",
    kind: "bubblewrap",
    unsandboxedReason: null,
    network: { mode: req.network.mode, allowedHosts: req.network.mode === "none" ? [] : req.network.allowedHosts.slice(0, 200) },
    limits,
    user: `uid ${sandboxUid}, not root, in its own user namespace${hostUid !== null ? ` (host uid ${hostUid})` : ""}`,
    ...(req.modelGateway ? { modelGateway: new URL(req.modelGateway.upstream).host } : {}),
  };

  return {
    ...stdio,
    started,
    signal,
    get limitHit() {
      return limitHit;
    },
    finish: async (exitSignal) => {
      finished = true;
      await ready;
      await (monitor as ReturnType<typeof startMonitor> | null)?.checkDisk().catch(() => undefined);
      (monitor as ReturnType<typeof startMonitor> | null)?.stop();
      // The init is gone once bubblewrap exited; anything still in the namespace is killed.
      killAll("SIGKILL", false);
      await closeForwarded();
      await (forget as (() => Promise<void>) | null)?.();
      const peak = (monitor as ReturnType<typeof startMonitor> | null)?.peak;
      limitHit ??= limitOfSignal(exitSignal ?? null, limits);
      const hit = limitHit as LimitHit | null;
      return {
        phase: "ended",
        limit: hit?.limit ?? null,
        reason: hit?.reason ?? null,
        peakMemoryMb: Math.round(peak?.memoryMb ?? 0),
        peakProcesses: peak?.processes ?? 0,
        cpuSeconds: Math.round((peak?.cpuSeconds ?? 0) * 10) / 10,
        blockedConnections: blockedCount,
      };
    },
  };
}

/** The limit a kernel signal enforces: SIGXCPU (a process's CPU seconds), SIGXFSZ (a file's size). */
function limitOfSignal(signal: NodeJS.Signals | null, limits: SandboxLimits): LimitHit | null {
  if (signal === "SIGXCPU") return { limit: "cpu", reason: `killed: ${describeLimit("cpu", limits)} (SIGXCPU)` };
  if (signal === "SIGXFSZ") return { limit: "disk", reason: `killed: ${describeLimit("disk", limits)} (a file reached it: SIGXFSZ)` };
  return null;
}

/** Resolves once the process runs; rejects with the spawn error (ENOENT, EACCES …). */
async function spawned(child: ChildProcess): Promise<void> {
  await Promise.race([once(child, "spawn"), once(child, "error").then(([err]) => Promise.reject(err as Error))]);
  // Later errors (a failed signal delivery) must not crash the worker; exit is authoritative.
  child.on("error", () => {});
}

/**
 * The sandbox init's host pid, as bubblewrap reports it on its status descriptor, read from spawn
 * on (a pipe nobody reads is drained and dropped when the child exits); null if it ended first.
 */
function initPidOf(status: Readable | null, exited: Promise<unknown>): Promise<number | null> {
  return new Promise((resolve) => {
    let text = "";
    status?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    status?.on("error", () => resolve(null));
    status?.on("close", () => resolve(null));
    void exited.then(() => resolve(null));
  });
}

/**
 * The child's pipes and its end, taken synchronously after spawn (before any await): the output
 * is buffered until the caller reads it, and the end is kept for whoever asks later.
 */
function captureStdio(child: ChildProcess) {
  const take = (source: Readable | null) => {
    const out = new PassThrough();
    if (source) source.pipe(out);
    else out.end();
    return out;
  };
  const stdout = take(child.stdout);
  const stderr = take(child.stderr);
  const ended = (s: PassThrough) => new Promise<void>((resolve) => s.once("end", resolve).once("close", resolve));
  const exit = new Promise<ProcessExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const closed = Promise.all([exit, ended(stdout), ended(stderr)]).then(([e]) => e);
  return {
    stdin: child.stdin as Writable,
    stdout: stdout as Readable,
    stderr: stderr as Readable,
    exited: exit,
    closed,
    stopReading: () => {
      for (const [source, out] of [[child.stdout, stdout], [child.stderr, stderr]] as const) {
        source?.unpipe(out);
        source?.destroy();
        out.end();
      }
    },
  };
}

/** A plain child in its own process group: only for a trusted pool an admin let run unsandboxed. */
async function launchUnsandboxed(req: Extract<LaunchRequest, { kind: "none" }>): Promise<SandboxedProcess> {
  const [command, ...args] = req.argv as [string, ...string[]];
  // No sandbox, no boundary to keep the key behind: the agent calls the model API itself.
  const g = req.modelGateway;
  const modelEnv = g ? { [g.baseUrlVariable]: g.upstream, [g.keyVariable]: g.key } : {};
  const child = spawn(command, args, { cwd: req.cwd, env: { ...req.env, ...modelEnv } as NodeJS.ProcessEnv, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  const stdio = captureStdio(child);
  await spawned(child);
  const signal = (sig: "SIGTERM" | "SIGKILL") => {
    try {
      if (child.pid) process.kill(-child.pid, sig); // negative pid: the whole process group
    } catch {
      /* the group is already gone */
    }
  };
  return {
    ...stdio,
    started: { phase: "started", kind: "none", unsandboxedReason: req.reason, network: { mode: "open", allowedHosts: [] }, limits: null, user: null },
    signal,
    limitHit: null,
    finish: async () => {
      signal("SIGKILL");
      return { phase: "ended", limit: null, reason: null, peakMemoryMb: 0, peakProcesses: 0, cpuSeconds: 0, blockedConnections: 0 };
    },
  };
}
