import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AgentEvent } from "@/server/domain/events/catalogue";
import { collectArtifacts, guessArtifactKind, guessMediaType, sha256File } from "./artifacts";
import { EventChannel } from "./event-channel";
import { fillPlaceholders, type Scenario } from "./scenario";
import { getBuiltInScenario } from "./scenarios";
import {
  type AgentAdapter,
  type AgentExit,
  type AgentSession,
  type AgentStartOptions,
  AgentStartError,
} from "./types";

// Replays a recorded scenario as if an agent were working: same events, same
// pacing (divided by `speed`), artifacts written to the artifacts folder. For the
// demo and tests only: its session ids start with "scripted-" and its first
// event says, in the transcript, that no model is involved.

export type ScriptedAdapterConfig = {
  /** A scenario, or the name of a built-in one under server/execution/agents/scenarios/. */
  scenario: Scenario | string;
  /** 1 = recorded timing; 50 = fifty times faster. Default 1. */
  speed?: number;
  now?: () => Date;
};

export function createScriptedAdapter(config: ScriptedAdapterConfig): AgentAdapter {
  const speed = config.speed ?? 1;
  if (!(speed > 0)) throw new Error("scripted adapter: speed must be positive");
  return { kind: "scripted", start: (options) => startScripted(config, speed, options) };
}

async function startScripted(config: ScriptedAdapterConfig, speed: number, options: AgentStartOptions): Promise<AgentSession> {
  const scenario = typeof config.scenario === "string" ? getBuiltInScenario(config.scenario) : config.scenario;
  if (!scenario) throw new AgentStartError(`unknown scenario "${String(config.scenario)}"`);
  if (options.signal?.aborted) throw new AgentStartError("the attempt was cancelled before the agent started");
  if (!(options.limits.wallClockMs > 0)) throw new AgentStartError("the wall-clock limit must be positive");
  await mkdir(options.artifactsDir, { recursive: true }).catch((err: Error) => {
    throw new AgentStartError(`could not create the artifacts folder: ${err.message}`, { cause: err });
  });

  const now = config.now ?? (() => new Date());
  const sessionId = `scripted-${randomUUID()}`;
  const channel = new EventChannel<AgentEvent>(options.onEvent);
  const abort = new AbortController();
  let stopped: { status: "cancelled" | "timed_out"; reason: string } | undefined;
  let finished = false;

  const stop = (status: "cancelled" | "timed_out", reason: string) => {
    if (stopped || finished) return;
    stopped = { status, reason };
    abort.abort();
  };
  const wallClock = setTimeout(
    () => stop("timed_out", `wall-clock limit of ${options.limits.wallClockMs / 1000} s reached`),
    options.limits.wallClockMs,
  );
  const onAbort = () => {
    const r: unknown = options.signal?.reason;
    stop("cancelled", r instanceof Error ? r.message : typeof r === "string" ? r : "aborted");
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const vars = { workspaceDir: options.workspaceDir, artifactsDir: options.artifactsDir };
  const toolStarts = new Map<string, number>();

  async function writeArtifact(name: string, content: string): Promise<void> {
    const path = join(options.artifactsDir, name);
    await mkdir(dirname(path), { recursive: true });
    const data = fillPlaceholders(content, vars);
    await writeFile(path, data);
    channel.push({
      type: "artifact_produced",
      payload: {
        kind: guessArtifactKind(name),
        name,
        digest: await sha256File(path),
        sizeBytes: Buffer.byteLength(data),
        mediaType: guessMediaType(name),
      },
    });
  }

  function replayEvent(step: Scenario["steps"][number]["event"]): AgentEvent {
    const event = fillPlaceholders(step, vars);
    const at = now();
    if (event.type === "heartbeat") return { type: "heartbeat", payload: { sessionId } };
    if (event.type === "tool_call") {
      toolStarts.set(event.payload.id, at.getTime());
      return { type: "tool_call", payload: { ...event.payload, startedAt: at.toISOString() } };
    }
    if (event.type === "tool_result" && event.payload.durationMs === undefined) {
      const started = toolStarts.get(event.payload.toolCallId);
      if (started !== undefined) return { ...event, payload: { ...event.payload, durationMs: at.getTime() - started } };
    }
    return event;
  }

  const exit = (async (): Promise<AgentExit> => {
    channel.push({
      type: "message",
      payload: {
        role: "system",
        text: `**Scripted demo agent** replaying the recorded scenario “${scenario.title}”. No model is called and nothing runs in the workspace.`,
      },
    });
    let failure: string | undefined;
    try {
      for (const [index, step] of scenario.steps.entries()) {
        await sleep(step.delayMs / speed, abort.signal);
        channel.push(replayEvent(step.event));
        for (const artifact of scenario.artifacts.filter((a) => a.afterStep === index)) {
          await writeArtifact(artifact.name, artifact.content);
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) failure = `the scenario could not be replayed: ${(err as Error).message}`;
    }
    finished = true;
    clearTimeout(wallClock);
    options.signal?.removeEventListener("abort", onAbort);
    const { artifacts } = await collectArtifacts(options.artifactsDir).catch(() => ({ artifacts: [] }));
    const result: AgentExit = stopped
      ? { status: stopped.status, exitCode: null, reason: stopped.reason, artifacts }
      : failure
        ? { status: "failed", exitCode: null, reason: failure, artifacts }
        : { ...scenario.exit, artifacts };
    channel.push({ type: "log", payload: { stream: "system", text: `Agent exited: ${result.status} (${result.reason})` } });
    channel.close();
    return result;
  })();

  return { sessionId, events: channel, exit, cancel: (reason) => stop("cancelled", reason) };
}

/** Resolves after ms, or rejects as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
