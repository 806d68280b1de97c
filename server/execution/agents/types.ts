import type { AdapterLaunch } from "@/server/domain/runs/schemas";
import type { ArtifactKind } from "@/server/db/generated/enums";
import type { AgentEvent } from "@/server/domain/events/catalogue";
import type { SandboxPayload } from "@/server/execution/sandbox/events";
import type { SandboxLimits, SandboxNetwork } from "@/server/execution/sandbox/policy";

// One interface for every agent adapter (command, scripted). The worker starts a
// session per attempt, appends its events as RunEvents, and records the exit.

export type AgentStartOptions = {
  /** The assembled prompt; the command adapter writes it on stdin. */
  prompt: string;
  /** The run's context bundle; handed to the agent as a JSON file. */
  contextBundle: unknown;
  /** The attempt's isolated workspace (a git worktree at the run's head SHA). Must exist. */
  workspaceDir: string;
  /** Where the agent writes artifacts; created if missing, collected at exit. */
  artifactsDir: string;
  /** The only variables the agent sees besides PATH, HOME, LANG and AIRLOCK_*: granted secrets and config. */
  env: Record<string, string>;
  limits: { wallClockMs: number };
  /** Where the agent's process runs: a sandbox, or (an admin's choice for a trusted pool) none. */
  sandbox: AgentSandbox;
  /** Aborting cancels the session, like cancel(reason). */
  signal?: AbortSignal;
  /** Called for every event as it happens, in addition to the `events` iterable. */
  onEvent?: (event: SessionEvent) => void;
};

/** How an adapter that starts a process must contain it (server/execution/sandbox). */
export type AgentSandbox =
  | {
      kind: "bubblewrap";
      network: SandboxNetwork;
      limits: SandboxLimits;
      /** Read-only besides the system folders (the project's tool chain, the repository's git objects). */
      readOnlyPaths: string[];
      /** Read-write besides the workspace, artifacts and HOME (a worktree's git folder). */
      writablePaths: string[];
      /** Masked inside the read-only paths (the data folder, .env files). */
      hiddenPaths: string[];
      /** Where live sandboxes are recorded for the reaper. */
      stateDir: string;
    }
  | { kind: "none"; reason: string };

/** What a session emits: the agent's events, and the worker's own `sandbox` events about it. */
export type SessionEvent = AgentEvent | { type: "sandbox"; payload: SandboxPayload };

export type AgentExitStatus = "succeeded" | "failed" | "cancelled" | "timed_out";

export type CollectedArtifact = {
  kind: ArtifactKind;
  /** Path relative to the artifacts folder, with forward slashes. */
  name: string;
  /** Absolute path of the file on disk. */
  path: string;
  /** sha256:<hex> of the file's bytes. */
  digest: string;
  sizeBytes: number;
  mediaType: string;
};

export type AgentExit = {
  status: AgentExitStatus;
  /** The process exit code; null when killed by a signal or when there is no process. */
  exitCode: number | null;
  /** One sentence for the attempt's exitReason. */
  reason: string;
  artifacts: CollectedArtifact[];
  /** The agent's own session id when it reported one (Claude Code's session_id), for resume. */
  externalSessionId?: string;
};

export interface AgentSession {
  /** Airlock's id for this session (stored as the attempt's adapterSessionId). */
  readonly sessionId: string;
  /**
   * Every event, in order, ending when the session has exited. Single consumer;
   * events are buffered until read, so read it (or use onEvent) promptly.
   */
  readonly events: AsyncIterable<SessionEvent>;
  /** Resolves once the agent has exited and artifacts are collected. Never rejects. */
  readonly exit: Promise<AgentExit>;
  /** Stops the session; idempotent. The exit status becomes "cancelled". */
  cancel(reason: string): void;
  /** What the process was started with (argv, generated files, variables by name): stored on the attempt. */
  readonly launch?: AdapterLaunch;
}

export interface AgentAdapter {
  readonly kind: "command" | "scripted" | "claude-code";
  /**
   * Starts a session. Rejects with AgentStartError when the agent cannot start
   * (missing workspace, command not found, invalid scenario); it never hangs.
   */
  start(options: AgentStartOptions): Promise<AgentSession>;
}

/**
 * The agent could not be started; `message` is the reason to record on the attempt. `transient`
 * (a busy machine or cluster, not a broken configuration) lets the attempt be retried; unless
 * told, it is read from the cause (see isTransientFailure).
 */
export class AgentStartError extends Error {
  readonly transient: boolean;
  constructor(message: string, options?: { cause?: unknown; transient?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AgentStartError";
    this.transient = options?.transient ?? isTransientFailure(options?.cause);
  }
}

// Failures that say "not now" rather than "never": resources briefly exhausted, a peer that
// did not answer, a cluster that is overloaded or restarting. Anything else (ENOENT, EACCES,
// 4xx refusals, invalid specs) is a configuration problem a retry would repeat.
const transientErrnos = new Set(["EAGAIN", "EMFILE", "ENFILE", "ENOMEM", "EBUSY", "ETXTBSY", "ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const transientHttp = new Set([408, 429, 500, 502, 503, 504]);

/** Whether an error (or any error in its cause chain) is transient. Pure. */
export function isTransientFailure(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, statusCode, status } = e as { code?: unknown; statusCode?: unknown; status?: unknown };
    if (typeof code === "string" && transientErrnos.has(code)) return true;
    // @kubernetes/client-node's ApiException carries the HTTP status as `code`; others use statusCode/status.
    for (const http of [code, statusCode, status]) if (typeof http === "number" && transientHttp.has(http)) return true;
    if (e instanceof AgentStartError) return e.transient;
  }
  return false;
}
