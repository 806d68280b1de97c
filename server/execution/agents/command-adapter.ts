import { randomUUID } from "node:crypto";
import type { AdapterLaunch } from "@/server/domain/runs/schemas";
import { access, constants as fsConstants, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { constants as osConstants, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type AgentEvent, truncateText } from "@/server/domain/events/catalogue";
import { launchAgentProcess, SandboxLaunchError, type SandboxedProcess } from "@/server/execution/sandbox/launch";
import type { SandboxMetered } from "@/server/execution/sandbox/events";
import type { GatewayUsage, ModelGatewaySpec } from "@/server/execution/sandbox/model-gateway";
import { type ArtifactLimits, collectArtifacts, defaultArtifactLimits } from "./artifacts";
import { EventChannel } from "./event-channel";
import { LineSplitter } from "./line-splitter";
import { createOutputDecoder, type OutputFormat } from "./output-decoder";
import {
  type AgentAdapter,
  type AgentExit,
  type AgentExitStatus,
  type AgentSession,
  type AgentStartOptions,
  AgentStartError,
  type SessionEvent,
} from "./types";

// Runs a configured command as the agent: argv (no shell), in the attempt's
// workspace, inside the attempt's sandbox (server/execution/sandbox), with only the variables it was granted.
// The prompt goes on stdin, the context bundle in a JSON file; stdout is decoded
// line by line into events; stderr becomes log lines; artifacts are collected
// from AIRLOCK_ARTIFACTS_DIR once the process has exited.

export type CommandAdapterConfig = {
  /** [command, ...args]; the command is looked up on the agent's PATH. */
  argv: string[];
  /** How stdout is read; "auto" detects Airlock events or Claude stream-json per line. */
  outputFormat?: OutputFormat;
  /** Time between SIGTERM and SIGKILL when stopping. Default 5 s. */
  killGraceMs?: number;
  /** The agent's PATH. Default: this Node's bin folder, then the usual system folders. */
  path?: string;
  /** The agent's HOME. Default: a fresh folder per session, removed at exit. */
  home?: string;
  lang?: string;
  /** Emit a heartbeat event this often while the process runs (0 = never). */
  heartbeatIntervalMs?: number;
  maxLineChars?: number;
  artifactLimits?: ArtifactLimits;
  now?: () => Date;
  /**
   * Builds the process from the session's own folders before it starts (the claude-code adapter:
   * generated files, skills in HOME): its argv and environment replace the configured ones, its
   * read-only paths are bound into the sandbox, its events open the transcript.
   */
  prepare?: (session: PreparedSession) => Promise<{ argv: string[]; env: Record<string, string>; readOnlyPaths: string[]; events: AgentEvent[]; launch?: AdapterLaunch; modelGateway?: ModelGatewaySpec }>;
  /**
   * Runs after the process has exited, before the session's folders are removed (the
   * claude-code adapter keeps the CLI's session file for a later --resume); its events close the
   * transcript. A failure is logged, never the attempt's.
   */
  afterExit?: (session: { home: string; externalSessionId: string | undefined }) => Promise<AgentEvent[]>;
};

export type PreparedSession = {
  sessionDir: string;
  contextFile: string;
  home: string;
  workspaceDir: string;
  artifactsDir: string;
  /** The granted variables the attempt was started with. */
  env: Record<string, string>;
};

/** An agent's PATH unless its adapter names one: this Node's bin folder, then the usual system folders. */
export const defaultAgentPath = [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":");
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;
// After the process exits, wait this long for its output pipes to drain (a
// daemonised grandchild could hold them open forever).
const drainTimeoutMs = 2000;

const systemLog = (text: string): AgentEvent => ({ type: "log", payload: { stream: "system", text } });
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

export function createCommandAdapter(config: CommandAdapterConfig): AgentAdapter {
  if (config.argv.length === 0 || !config.argv[0]) throw new Error("command adapter: argv must name a command");
  return { kind: "command", start: (options) => startCommand(config, options) };
}

async function startCommand(config: CommandAdapterConfig, options: AgentStartOptions): Promise<AgentSession> {
  const { workspaceDir, artifactsDir, limits, signal } = options;
  if (signal?.aborted) throw new AgentStartError("the attempt was cancelled before the agent started");
  if (!(limits.wallClockMs > 0)) throw new AgentStartError("the wall-clock limit must be positive");
  for (const name of Object.keys(options.env)) {
    if (!envName.test(name)) throw new AgentStartError(`invalid environment variable name "${name}"`);
  }
  const workspace = await stat(workspaceDir).catch(() => undefined);
  if (!workspace?.isDirectory()) throw new AgentStartError(`the workspace ${workspaceDir} does not exist`);

  const sessionId = `command-${randomUUID()}`;
  // Per-session scratch: the context file and (by default) HOME, so nothing of
  // the server user's home (credentials, caches) is visible to the agent.
  const sessionDir = await mkdtemp(join(tmpdir(), "airlock-session-"));
  const contextFile = join(sessionDir, "context.json");
  const home = config.home ?? join(sessionDir, "home");
  let prepared: Awaited<ReturnType<NonNullable<CommandAdapterConfig["prepare"]>>> | undefined;
  try {
    await mkdir(artifactsDir, { recursive: true });
    await mkdir(home, { recursive: true });
    await writeFile(contextFile, JSON.stringify(options.contextBundle ?? null, null, 2));
    prepared = await config.prepare?.({ sessionDir, contextFile, home, workspaceDir, artifactsDir, env: options.env });
  } catch (err) {
    await rm(sessionDir, { recursive: true, force: true });
    if (err instanceof AgentStartError) throw err;
    throw new AgentStartError(`could not prepare the session: ${(err as Error).message}`, { cause: err });
  }
  const [command, ...args] = (prepared?.argv ?? config.argv) as [string, ...string[]];

  const env: Record<string, string> = {
    PATH: config.path ?? defaultAgentPath,
    HOME: home,
    LANG: config.lang ?? "C.UTF-8",
    ...(prepared?.env ?? options.env),
    AIRLOCK_ARTIFACTS_DIR: artifactsDir,
    AIRLOCK_WORKSPACE_DIR: workspaceDir,
    AIRLOCK_CONTEXT_FILE: contextFile,
    AIRLOCK_SESSION_ID: sessionId,
  };

  const found = await findCommand(command, env.PATH ?? "", workspaceDir);
  if (!found) {
    await rm(sessionDir, { recursive: true, force: true });
    throw new AgentStartError(`could not start \`${command}\`: command not found`);
  }

  const sandbox = options.sandbox;
  const metered = meteredTotals();
  let proc: SandboxedProcess;
  const pending: SessionEvent[] = [...(prepared?.events ?? [])];
  let emit = (e: SessionEvent): void => {
    pending.push(e);
  };
  try {
    proc = await launchAgentProcess({
      ...(sandbox.kind === "none" ? { kind: "none" as const, reason: sandbox.reason } : { kind: "bubblewrap" as const }),
      argv: [command, ...args],
      env,
      cwd: workspaceDir,
      writablePaths: [workspaceDir, artifactsDir, home, ...(sandbox.kind === "bubblewrap" ? sandbox.writablePaths : [])],
      readOnlyPaths: [contextFile, ...(prepared?.readOnlyPaths ?? []), ...(sandbox.kind === "bubblewrap" ? sandbox.readOnlyPaths : [])],
      hiddenPaths: sandbox.kind === "bubblewrap" ? sandbox.hiddenPaths : [],
      network: sandbox.kind === "bubblewrap" ? sandbox.network : { mode: "open", allowedHosts: [] },
      limits: sandbox.kind === "bubblewrap" ? sandbox.limits : { memoryMb: 0, processes: 0, cpuSeconds: 0, diskMb: 0 },
      sessionDir,
      stateDir: sandbox.kind === "bubblewrap" ? sandbox.stateDir : sessionDir,
      onBlocked: (b) => emit({ type: "sandbox", payload: { phase: "blocked", ...b } }),
      modelGateway: prepared?.modelGateway,
      onModelUsage: (u) => emit({ type: "sandbox", payload: metered.add(u) }),
    });
  } catch (err) {
    await rm(sessionDir, { recursive: true, force: true });
    if (err instanceof SandboxLaunchError) throw new AgentStartError(err.message);
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === "ENOENT" ? "command not found" : e.code === "EACCES" ? "permission denied" : e.message;
    throw new AgentStartError(`could not start \`${command}\`: ${why}`, { cause: err });
  }
  // What it ran with: the adapter's own account, or the argv and the granted variables by name.
  const launch: AdapterLaunch = prepared?.launch ?? {
    command: [command, ...args],
    files: [],
    env: Object.keys(options.env).map((name) => ({ name, from: "a grant" })),
    withheld: [],
    continuation: null,
  };
  const session = runSession({ config, options, proc, sessionId, sessionDir, home, command, pending, launch });
  emit = session.emit;
  return session.session;
}

/** The attempt's model usage per model, summed from the gateway's reports (the `metered` sandbox event). */
function meteredTotals() {
  const byModel = new Map<string, SandboxMetered["models"][number]>();
  let calls = 0;
  return {
    add(u: GatewayUsage): SandboxMetered {
      calls++;
      const key = u.model ?? "";
      const t = byModel.get(key) ?? { model: u.model, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      byModel.set(key, { model: u.model, inputTokens: t.inputTokens + u.inputTokens, outputTokens: t.outputTokens + u.outputTokens, cacheReadTokens: t.cacheReadTokens + u.cacheReadTokens, cacheWriteTokens: t.cacheWriteTokens + u.cacheWriteTokens });
      return { phase: "metered", calls, models: [...byModel.values()].slice(0, 50) };
    },
  };
}

/** The command's path on the agent's PATH (or relative to its cwd), or null when it is not there. */
async function findCommand(command: string, path: string, cwd: string): Promise<string | null> {
  const candidates = command.includes("/") ? [isAbsolute(command) ? command : resolve(cwd, command)] : path.split(":").filter(Boolean).map((d) => join(d, command));
  for (const c of candidates) {
    if (await access(c, fsConstants.X_OK).then(() => true, () => false)) return c;
  }
  return null;
}

type SessionParts = {
  config: CommandAdapterConfig;
  options: AgentStartOptions;
  proc: SandboxedProcess;
  sessionId: string;
  sessionDir: string;
  home: string;
  command: string;
  launch: AdapterLaunch;
  /** Sandbox events that arrived before the session existed. */
  pending: SessionEvent[];
};

const signalNames = Object.fromEntries(Object.entries(osConstants.signals).map(([name, n]) => [n, name])) as Record<number, NodeJS.Signals>;

function runSession({ config, options, proc, sessionId, sessionDir, home, command, pending, launch }: SessionParts): { session: AgentSession; emit: (e: SessionEvent) => void } {
  const graceMs = config.killGraceMs ?? 5000;
  const channel = new EventChannel<SessionEvent>(options.onEvent);
  const decoder = createOutputDecoder({ format: config.outputFormat, now: config.now });
  let stopping: { status: "cancelled" | "timed_out"; reason: string } | undefined;
  let killedAfterGrace = false;
  let exited = false;
  let lastStderr = "";
  channel.push({ type: "sandbox", payload: proc.started });
  for (const e of pending) channel.push(e);

  const killGroup = (sig: "SIGTERM" | "SIGKILL") => proc.signal(sig);

  const stdout = new LineSplitter((line, kind, cutBytes) => {
    for (const event of decoder.decodeLine(line, kind, cutBytes)) channel.push(event);
  }, config.maxLineChars);
  const stderr = new LineSplitter((line) => {
    if (!line.trim()) return;
    lastStderr = line.trim();
    channel.push({ type: "log", payload: { stream: "stderr", text: truncateText(line) } });
  }, config.maxLineChars);
  proc.stdout.on("data", (chunk: Buffer) => stdout.write(chunk));
  proc.stderr.on("data", (chunk: Buffer) => stderr.write(chunk));

  // The agent may exit without reading its prompt; a broken pipe is not an error.
  proc.stdin.on("error", () => {});
  proc.stdin.end(options.prompt);

  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (status: "cancelled" | "timed_out", reason: string) => {
    if (stopping || exited) return;
    stopping = { status, reason };
    channel.push(systemLog(`Stopping the agent (${reason}): SIGTERM to ${proc.started.kind === "none" ? "its process group" : "every process in its sandbox"}`));
    killGroup("SIGTERM");
    graceTimer = setTimeout(() => {
      killedAfterGrace = true;
      channel.push(systemLog(`The agent did not exit within ${seconds(graceMs)} of SIGTERM: SIGKILL`));
      killGroup("SIGKILL");
    }, graceMs);
  };

  const wallClock = setTimeout(
    () => stop("timed_out", `wall-clock limit of ${seconds(options.limits.wallClockMs)} reached`),
    options.limits.wallClockMs,
  );
  const heartbeat =
    config.heartbeatIntervalMs && config.heartbeatIntervalMs > 0
      ? setInterval(() => channel.push({ type: "heartbeat", payload: { sessionId } }), config.heartbeatIntervalMs)
      : undefined;
  const onAbort = () => {
    const r: unknown = options.signal?.reason;
    stop("cancelled", r instanceof Error ? r.message : typeof r === "string" ? r : "aborted");
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort(); // aborted while the process was being spawned


  const exit = (async (): Promise<AgentExit> => {
    const { code: rawCode, signal: rawSignal } = await proc.exited;
    exited = true;
    // bubblewrap reports an agent killed by a signal as 128 + its number.
    const bySignal = proc.started.kind !== "none" && rawCode !== null && rawCode > 128 && rawCode < 128 + 65 ? signalNames[rawCode - 128] : undefined;
    const code = bySignal ? null : rawCode;
    const signal = bySignal ?? rawSignal;
    clearTimeout(wallClock);
    clearTimeout(graceTimer);
    clearInterval(heartbeat);
    options.signal?.removeEventListener("abort", onAbort);
    // End whatever the agent left running (its sandbox or its group), so attempts never leak processes.
    const ended = await proc.finish(signal);
    const drained = await Promise.race([
      proc.closed.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), drainTimeoutMs)),
    ]);
    if (!drained) {
      proc.stopReading();
      channel.push(systemLog("The agent's output was still open after it exited; stopped reading it"));
    }
    stdout.end();
    stderr.end();

    let artifacts: AgentExit["artifacts"] = [];
    try {
      const collected = await collectArtifacts(options.artifactsDir, config.artifactLimits ?? defaultArtifactLimits);
      artifacts = collected.artifacts;
      for (const a of artifacts) {
        channel.push({
          type: "artifact_produced",
          payload: { kind: a.kind, name: a.name, digest: a.digest, sizeBytes: a.sizeBytes, mediaType: a.mediaType },
        });
      }
      for (const s of collected.skipped) channel.push(systemLog(`Artifact ${s.name} not collected: ${s.reason}`));
    } catch (err) {
      channel.push(systemLog(`Could not collect artifacts: ${(err as Error).message}`));
    }

    if (config.afterExit) {
      try {
        for (const e of await config.afterExit({ home, externalSessionId: decoder.externalSessionId })) channel.push(e);
      } catch (err) {
        channel.push(systemLog(`After the agent exited: ${(err as Error).message}`));
      }
    }

    const { status, reason } = outcome(code, signal);
    if (proc.started.kind !== "none") channel.push({ type: "sandbox", payload: ended });
    channel.push(systemLog(`Agent exited: ${status} (${reason})`));
    channel.close();
    await rm(sessionDir, { recursive: true, force: true }).catch(() => {});
    const externalSessionId = decoder.externalSessionId;
    return { status, exitCode: code, reason, artifacts, ...(externalSessionId ? { externalSessionId } : {}) };
  })();

  function outcome(code: number | null, signal: NodeJS.Signals | null): { status: AgentExitStatus; reason: string } {
    const limit = proc.limitHit;
    if (limit) return { status: "failed", reason: limit.reason };
    if (stopping) {
      const how = killedAfterGrace ? ` (killed after ${seconds(graceMs)} grace)` : "";
      return { status: stopping.status, reason: `${stopping.reason}${how}` };
    }
    const tail = lastStderr ? `: ${truncateText(lastStderr, 300)}` : "";
    // Claude Code's own verdict, whatever its exit code: the subtype and its first error line.
    const claude = decoder.claudeOutcome;
    if (code !== null && claude?.isError) {
      const said = claude.errors[0] ?? (claude.subtype === "success" ? claude.text : undefined);
      const spent = claude.usd !== undefined ? ` after $${claude.usd.toFixed(4)}` : "";
      const how = claude.subtype === "success" ? "an error" : claude.subtype;
      return { status: "failed", reason: `Claude Code ended with ${how}${spent}${said ? `: ${truncateText(said, 300)}` : ""}` };
    }
    if (code === 0) {
      return { status: "succeeded", reason: `\`${command}\` exited with code 0` };
    }
    if (code !== null) return { status: "failed", reason: `\`${command}\` exited with code ${code}${tail}` };
    return { status: "failed", reason: `\`${command}\` was killed by ${signal ?? "a signal"}${tail}` };
  }

  return {
    session: { sessionId, events: channel, exit, cancel: (reason) => stop("cancelled", reason), launch },
    emit: (e) => channel.push(e),
  };
}
