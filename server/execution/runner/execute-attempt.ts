import { lstat, readFile } from "node:fs/promises";
import { resolve, sep } from "node:path";
import type { Db } from "@/server/db";
import { AgentStartError, type AgentSession, type CollectedArtifact } from "@/server/execution/agents/types";
import { redactText, SECRETLINT_PRESET } from "@/server/domain/context/redaction/redact";
import { TranscriptRedactor } from "@/server/domain/context/redaction/transcript";
import { knownSecretsFor } from "@/server/domain/ingest/known-secrets";
import { describeFindings } from "@/server/domain/runs/artifact-content";
import type { RunEventInput } from "@/server/domain/events/catalogue";
import { appendRunEvents } from "@/server/domain/events/append";
import { stackSpecOf } from "@/server/domain/runs/admit-attempt";
import { appendAttemptEvents, isFencedError } from "@/server/domain/runs/attempt-fence";
import { failAttemptStart, markAttemptRunning, releaseAttempt } from "@/server/domain/runs/attempts";
import { attemptLaunch } from "@/server/domain/runs/attempt-launch";
import type { ClaimResult } from "@/server/domain/run-engine/claim-attempt";
import { finishAttempt, recordAttemptCost, storeAttemptArtifact, type StoredArtifact } from "@/server/domain/run-engine/finish-attempt";
import { createWorkspace, keepWorkspace, removeWorkspace, type Workspace, workspacePaths } from "@/server/execution/workspaces/workspaces";
import { guessArtifactKind, guessMediaType } from "@/server/execution/agents/artifacts";
import { contentDigest } from "@/server/lib/digest";
import { boundText } from "@/server/lib/text-boundary";
import { buildAdapter, grantedEnvironment, grantsOf, sandboxFor } from "./adapters";
import { preflightMcpServers } from "./mcp-preflight";
import { createCostMeter } from "./cost-meter";
import type { SandboxMetered } from "@/server/execution/sandbox/events";
import type { RunnerSettings } from "./settings";
import type { AttemptRegistry, StopRequest } from "./attempt-registry";
import { EventBatcher } from "./event-batcher";

// Runs one claimed attempt to its end: workspace, adapter session, event streaming (batched,
// redacted, fenced), heartbeats, artifacts, and the outcome. Nothing here decides state: each
// write goes through a fenced domain function, and a refused write (the attempt was replaced,
// cancelled or lost) stops the session and ends the attempt here without touching the run.

export type RunnerDeps = { db: Db; settings: RunnerSettings; registry: AttemptRegistry; log: (line: string) => void };

type Started = Extract<ClaimResult, { kind: "started" }>;

export type AttemptOutcome = "finished" | "start_failed" | "fenced" | "cancelled" | "released";

const maxTextArtifactBytes = 1024 * 1024;
const artifactRetentionMs = 90 * 24 * 3600_000;
const textTypes = /^(text\/|application\/(json|xml))/;

export async function executeAttempt(deps: RunnerDeps, claim: Started): Promise<AttemptOutcome> {
  const { db, settings, log } = deps;
  const { run, attempt, fence } = claim;
  const tag = `run ${run.number} attempt ${attempt.number}`;
  const abort = new AbortController();
  let stop: StopRequest | undefined;
  let fenced = false;
  let sessionId: string | undefined;
  const halt = (request: StopRequest) => {
    stop ??= request;
    abort.abort(request.reason);
  };
  // A transcript or artifact write that failed for good (after the batcher's retries): the
  // attempt cannot end well, whatever the agent says, so it is stopped and ends failed with this.
  let writeLoss: string | null = null;
  let session: AgentSession | undefined;
  const onWriteLoss = (what: string, reason: string) => {
    const loss = `${what} could not be stored: ${reason}`;
    log(`${tag}: ${loss}`);
    if (writeLoss === null) {
      writeLoss = loss;
      session?.cancel(`${loss}; the attempt fails`);
    }
  };
  const onWriteError = (err: unknown) => {
    if (isFencedError(err)) {
      fenced = true;
      halt({ kind: "cancel", reason: `the attempt was taken from this worker: ${(err as Error).message}`, at: Date.now() });
    } else {
      log(`${tag}: write failed: ${(err as Error).message}`);
    }
  };
  const unregister = deps.registry.register(run.id, attempt.id, halt);
  const heartbeat = setInterval(() => {
    appendAttemptEvents({ db, fence, events: [{ type: "heartbeat", payload: sessionId ? { sessionId } : {} }] }).catch(onWriteError);
  }, settings.heartbeatIntervalMs);

  let workspace: Workspace | null = null;
  let artifactsDir: string | null = null;
  let exited = false;
  try {
    const stack = stackSpecOf(run.stackSnapshot);
    if (!stack) throw new AgentStartError("the run's stack snapshot has no valid stack definition");
    const onCluster = claim.pool.kind === "kubernetes";
    // A pod's artifacts come back through its log and are rebuilt here, where a local attempt's are.
    if (onCluster) artifactsDir = workspacePaths(settings.dataDir, run.id, attempt.number).artifactsDir;
    if (!onCluster) {
      workspace = await createWorkspace({ dataDir: settings.dataDir, repository: run.repository, runId: run.id, attemptNumber: attempt.number, sha: run.headSha }).catch(
        (err: Error) => {
          throw new AgentStartError(`could not prepare the workspace: ${err.message}`, { cause: err });
        },
      );
      await appendAttemptEvents({
        db,
        fence,
        events: [{ type: "log", payload: { stream: "system", text: `Workspace ready: git worktree of ${run.repository.fullName} at ${run.headSha.slice(0, 12)} in ${workspace.dir}` } }],
      });
    }
    const { env, missing, knownSecrets } = grantedEnvironment(claim.admission);
    if (missing.length > 0) {
      await appendAttemptEvents({
        db,
        fence,
        events: [{ type: "log", payload: { stream: "system", text: `Granted but not configured on the server (left unset): ${missing.join(", ")}` } }],
      });
    }
    const sandbox = sandboxFor({ admission: claim.admission, env, dataDir: settings.dataDir, workspace, modelGateway: stack.spec.adapter.kind === "claude-code" });
    // The stack's MCP servers are checked before launch: a required one that fails refuses it.
    const mcp = await preflightMcpServers({
      spec: stack.spec,
      grants: grantsOf(claim.admission),
      granted: env,
      sandbox: onCluster ? null : sandbox,
      workspaceDir: workspace?.dir ?? null,
      ids: { runId: run.id, attemptId: attempt.id },
      timeoutMs: settings.mcpHealthTimeoutMs,
    });
    if (mcp.events.length > 0) await appendAttemptEvents({ db, fence, events: mcp.events });
    if (mcp.refusal) throw new AgentStartError(mcp.refusal);
    const adapter = buildAdapter({ spec: stack.spec, claim, settings, leaveOut: mcp.leaveOut });
    const wallClockMs = stack.spec.limits.wallClockMinutes * 60_000;
    let live: AgentSession;
    try {
      live = await adapter.start({
        prompt: run.prompt,
        contextBundle: run.contextBundle,
        workspaceDir: workspace?.dir ?? "/workspace",
        artifactsDir: workspace?.artifactsDir ?? artifactsDir ?? "/artifacts",
        env,
        limits: { wallClockMs },
        sandbox,
        signal: abort.signal,
      });
    } catch (err) {
      throw err instanceof AgentStartError ? err : new AgentStartError((err as Error).message, { cause: err });
    }
    session = live;
    sessionId = live.sessionId;
    const launchRecord = attemptLaunch({ spec: stack.spec, admission: claim.admission, adapter: onCluster ? "kubernetes" : stack.spec.adapter.kind, launch: live.launch });
    await markAttemptRunning({ db, fence, sessionId, workspacePath: workspace?.dir ?? null, launchRecord });

    const stored = new Map<string, StoredArtifact>();
    // Every run is redacted, granted secrets or not: fork and untrusted runs are the likeliest to
    // print a token. Token shapes always; granted values and Airlock's own credentials by value.
    const secrets = [...knownSecrets, ...knownSecretsFor([])];
    // A database error can quote what it refused: the line saying so is redacted like the rest.
    const why = (err: unknown) => redactText(oneLine(err), { secrets }).text;
    const batcher = new EventBatcher<RunEventInput>({
      flushMs: settings.eventBatchMs,
      maxBatch: 500,
      isFatal: isFencedError,
      // The gap shows where it is: a line saying what could not be stored, in the event's place.
      placeholder: (event, err) => ({ type: "log", payload: { stream: "system", text: `An agent event (${event.type}) could not be stored: ${why(err)}` } }),
      onError: (err, failure) => (failure.fatal ? onWriteError(err) : onWriteLoss(`${failure.lost} transcript event${failure.lost === 1 ? "" : "s"}`, why(err))),
      write: (events) => {
        const cost = events.findLast((e) => e.type === "cost");
        return appendAttemptEvents({
          db,
          fence,
          events,
          also: cost?.type === "cost" ? (tx) => recordAttemptCost(tx, fence, cost.payload) : undefined,
        }).then(() => undefined);
      },
    });
    const storeArtifact = (name: string) =>
      storeArtifactFile(name).catch((err: unknown) => (isFencedError(err) ? onWriteError(err) : onWriteLoss(`the artifact ${redactText(name, { secrets }).text}`, why(err))));
    // The file digests already stored, by name (a redacted diagnosis is stored under another digest).
    const storedFiles = new Map<string, string>();
    const storeArtifactFile = async (name: string) => {
      const dir = workspace?.artifactsDir ?? artifactsDir;
      if (!dir || fenced) return;
      const artifact = await readArtifact(dir, name);
      if (!artifact || storedFiles.get(name) === artifact.digest) return;
      await batcher.flush();
      const row = await storeAttemptArtifact({ db, fence, secrets, artifact: { ...artifact, retainUntil: new Date(Date.now() + artifactRetentionMs) } });
      storedFiles.set(name, artifact.digest);
      stored.set(name, row);
    };

    // Backstop: an adapter enforces the wall clock itself; if it does not end, stop waiting.
    const backstop = setTimeout(() => live.cancel("wall-clock backstop"), wallClockMs + 60_000);
    const redactor = new TranscriptRedactor(secrets);
    const meter = createCostMeter({ capUsd: stack.spec.limits.maxCostUsd });
    // The gateway reports after every model call; the transcript keeps the last report, once.
    let lastMetered: SandboxMetered | null = null;
    const stopAt = (over: string) => {
      // At the cap: the session (its whole process tree) is stopped, the attempt fails with the figures.
      log(`${tag}: ${over}`);
      batcher.push({ type: "log", payload: { stream: "system", text: `${over}. The agent session is being stopped.` } });
      live.cancel(over);
    };
    for await (const event of live.events) {
      if (event.type === "sandbox" && event.payload.phase === "metered") {
        lastMetered = event.payload;
        const { over } = meter.observeMetered(event.payload);
        if (over) stopAt(over);
        continue;
      }
      if (event.type === "sandbox" && event.payload.phase === "ended" && lastMetered) batcher.push({ type: "sandbox", payload: lastMetered });
      if (event.type === "artifact_produced") await storeArtifact(event.payload.name);
      else if (event.type === "cost") {
        const reading = meter.observe(event.payload);
        batcher.push(redactor.redact({ type: "cost", payload: reading.payload }));
        for (const note of reading.notes) batcher.push(note);
        if (reading.over) stopAt(reading.over);
      } else batcher.push(redactor.redact(event));
    }
    const masked = redactor.masked;
    const exit = await live.exit;
    exited = true;
    clearTimeout(backstop);
    // The run says what was masked in the agent's output, by rule and count, never a value.
    if (masked) {
      batcher.push({
        type: "log",
        payload: { stream: "system", text: `Masked in the agent's output: ${describeFindings(masked.entries)} (Airlock's rules and ${SECRETLINT_PRESET.id} ${SECRETLINT_PRESET.version}).` },
      });
    }
    await batcher.flush();
    for (const a of exit.artifacts as CollectedArtifact[]) await storeArtifact(a.name);
    // The agent's own session id (Claude Code's), kept on the attempt to find or resume the session.
    if (exit.externalSessionId && !fenced) {
      const agentSessionId = exit.externalSessionId.slice(0, 200);
      await appendAttemptEvents({
        db,
        fence,
        events: [{ type: "log", payload: { stream: "system", text: `Agent session id: ${agentSessionId}` } }],
        also: (tx) => tx.dispatchAttempt.update({ where: { id: fence.attemptId }, data: { agentSessionId } }).then(() => undefined),
      }).catch(onWriteError);
    }

    if (fenced) return await ended("fenced");
    if (stop?.kind === "shutdown") {
      await releaseAttempt({ db, fence, reason: `the worker shut down (${stop.reason}); the attempt will be retried` }).catch(onWriteError);
      return await ended("released");
    }
    // A run never reaches approval (or success) with a gap in its transcript or a lost artifact.
    // A budget stop (Airlock's, or the agent's own at the cap) fails the attempt, which is never
    // retried automatically; a person's cancel that came first stays a cancel.
    const atCap = stop?.kind === "cancel" ? undefined : exit.status === "failed" || meter.stopped ? meter.endedAtCap() : undefined;
    const end =
      writeLoss !== null
        ? { status: "failed" as const, reason: `${writeLoss} (${batcher.lost} event${batcher.lost === 1 ? "" : "s"} lost in all)` }
        : atCap
          ? { status: "failed" as const, reason: exit.status === "failed" && !meter.stopped ? `${atCap}: ${exit.reason}` : atCap }
          : { status: exit.status, reason: exit.reason };
    const result = await finishAttempt({
      db,
      fence,
      run,
      end,
      artifacts: [...stored.values()],
      approvalTtlMs: settings.approvalTtlMs,
    }).catch((err: unknown) => {
      if (!isFencedError(err)) throw err;
      fenced = true;
      return null;
    });
    if (!result) return await ended(stop?.kind === "cancel" ? "cancelled" : "fenced");
    log(`${tag}: ${end.status} (${end.reason}); run is ${result.runStatus}`);
    return await ended("finished", end.status === "succeeded");
  } catch (err) {
    if (err instanceof AgentStartError) {
      log(`${tag}: could not start: ${err.message}`);
      await failAttemptStart({ db, fence, reason: err.message, transient: err.transient }).catch(onWriteError);
      return await ended("start_failed");
    }
    if (isFencedError(err)) {
      fenced = true;
      return await ended("fenced");
    }
    throw err;
  } finally {
    clearInterval(heartbeat);
    unregister();
    // Whatever went wrong, never leave an agent running without its attempt.
    if (session && !exited) {
      session.cancel("the worker stopped following this attempt");
      await Promise.race([session.exit, new Promise((r) => setTimeout(r, 10_000))]);
    }
  }

  async function ended(outcome: AttemptOutcome, succeeded = false): Promise<AttemptOutcome> {
    if (outcome === "fenced" || outcome === "cancelled") {
      // The attempt's own writes are refused now; this note is the worker's, not the agent's.
      const waited = stop ? Date.now() - stop.at : 0;
      await appendRunEvents({
        db,
        runId: run.id,
        events: [{ type: "log", payload: { stream: "system", text: `Attempt ${attempt.number}: the agent session stopped ${waited} ms after ${stop?.reason ?? "its attempt was fenced off"}.` } }],
      }).catch(() => undefined);
    }
    if (workspace) {
      if (succeeded || settings.keepFailedWorkspaceMs === 0) await removeWorkspace({ dataDir: settings.dataDir, ...workspace });
      else await keepWorkspace(workspace.dir, new Date(Date.now() + settings.keepFailedWorkspaceMs)).catch(() => undefined);
    }
    return outcome;
  }
}

/** A database error as one bounded line (Prisma's messages span lines and quote the query). */
const oneLine = (err: unknown) => boundText(String((err as Error)?.message ?? err).replace(/\s+/g, " ").trim(), 500);

/** Reads an artifact the agent left, refusing anything outside the folder or not a regular file. */
async function readArtifact(artifactsDir: string, name: string) {
  const path = resolve(artifactsDir, name);
  if (!path.startsWith(`${resolve(artifactsDir)}${sep}`)) return null;
  const info = await lstat(path).catch(() => null);
  if (!info?.isFile() || info.size > 10 * 1024 * 1024) return null;
  const bytes = await readFile(path);
  const mediaType = guessMediaType(name);
  const text = bytes.length <= maxTextArtifactBytes && (textTypes.test(mediaType) || mediaType === "application/octet-stream") && !bytes.includes(0);
  const decoded = text ? bytes.toString("utf8") : null;
  const isText = decoded !== null && !decoded.includes("\uFFFD");
  return {
    kind: guessArtifactKind(name),
    name,
    mediaType,
    digest: contentDigest(bytes),
    sizeBytes: bytes.length,
    content: isText ? decoded : null,
    location: isText ? null : path,
  };
}
