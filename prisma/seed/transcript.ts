import type { ArtifactKind } from "@/server/db";
import { type RunEventPayload, type RunEventType, zRunEventInput } from "@/server/domain/events/catalogue";
import type { StackSpec } from "@/server/domain/stacks/spec";
import type { ReportCase } from "./cases/reports";
import type { AgentCase, Command } from "./cases/types";
import { diffStat, patchOf } from "./diff";
import { addMs, contentDigest, newId, numbered, toolUseId } from "./util";

// Builds a run's transcript: RunEvents with gap-free seqs and increasing times,
// every payload validated against the event catalogue. An agent session is a
// list of beats (messages, tool calls, subagents, artifacts) played with
// realistic timing, heartbeats and cumulative cost events.

export type EventRow = { seq: number; type: RunEventType; payload: object; attemptId: string | null; createdAt: Date };

export class Transcript {
  readonly events: EventRow[] = [];
  attemptId: string | null = null;
  private scheduled: { at: Date; emit: () => void }[] = [];

  constructor(
    public t: Date,
    private readonly limit: Date,
  ) {}

  /** Moves the clock forward, first emitting anything scheduled in between. */
  wait(ms: number): this {
    const to = addMs(this.t, ms);
    for (;;) {
      const next = this.scheduled.filter((s) => s.at <= to).sort((a, b) => a.at.getTime() - b.at.getTime())[0];
      if (!next) break;
      this.scheduled = this.scheduled.filter((s) => s !== next);
      if (next.at > this.t) this.t = next.at;
      // Scheduled events (dropped redeliveries) belong to the run, not to the attempt in progress.
      const attemptId = this.attemptId;
      this.attemptId = null;
      next.emit();
      this.attemptId = attemptId;
    }
    this.t = to;
    if (this.t > this.limit) throw new Error(`seed: transcript runs past the seed time (${this.t.toISOString()})`);
    return this;
  }

  /** Emits `fn`'s events when the clock reaches `at` (e.g. redeliveries dropped meanwhile). */
  schedule(at: Date, emit: () => void): void {
    this.scheduled.push({ at, emit });
  }

  emit<T extends RunEventType>(type: T, payload: RunEventPayload<T>): this {
    const parsed = zRunEventInput.safeParse({ type, payload });
    if (!parsed.success) throw new Error(`seed: invalid ${type} event: ${parsed.error.message}`);
    this.events.push({ seq: this.events.length + 1, type, payload: parsed.data.payload, attemptId: this.attemptId, createdAt: this.t });
    this.t = addMs(this.t, 1);
    return this;
  }

  /** Emits everything still scheduled, at its time. */
  drain(): void {
    for (const s of [...this.scheduled].sort((a, b) => a.at.getTime() - b.at.getTime())) {
      if (s.at > this.t) this.wait(s.at.getTime() - this.t.getTime());
    }
    if (this.scheduled.length > 0) this.wait(0);
  }

  /** Emits what is still scheduled up to `until`. */
  flush(until: Date): void {
    if (until > this.t) this.wait(until.getTime() - this.t.getTime());
  }
}

// ---------------------------------------------------------------- beats

export type ProducedArtifact = { id: string; kind: ArtifactKind; name: string; content: string; mediaType: string };

type Beat =
  | { kind: "message"; text: string; sub?: string }
  | { kind: "tool"; name: string; input: Record<string, unknown>; output: string; isError?: boolean; ms: number; sub?: string }
  | { kind: "subStart"; id: string; name: string; task: string }
  | { kind: "subEnd"; id: string; name: string; summary: string; isError?: boolean }
  | { kind: "artifact"; artifact: ProducedArtifact };

const bash = (c: Command, sub?: string): Beat => ({
  kind: "tool",
  name: "Bash",
  input: { command: c.command, description: c.description },
  output: c.output || "(no output)",
  isError: c.isError ?? false,
  ms: c.ms,
  sub,
});

const write = (path: string, content: string, sub?: string): Beat => ({
  kind: "tool",
  name: "Write",
  input: { file_path: path, content },
  output: `File created successfully at: ${path}`,
  ms: 40,
  sub,
});

const artifact = (kind: ArtifactKind, name: string, content: string, mediaType: string): Beat => ({
  kind: "artifact",
  artifact: { id: newId(), kind, name, content, mediaType },
});

const hasSubagent = (spec: StackSpec, name: string) => spec.subagents.some((s) => s.name === name);

function diagnoseBeats(c: AgentCase, spec: StackSpec): Beat[] {
  const sub = toolUseId();
  const beats: Beat[] = [
    { kind: "message", text: c.opening },
    { kind: "subStart", id: sub, name: "diagnoser", task: "Reproduce the failure and name its root cause with file and line." },
    bash(c.reproduce, sub),
    { kind: "tool", name: "Read", input: { file_path: c.read.path, offset: c.read.firstLine, limit: c.read.text.split("\n").length }, output: numbered(c.read.text, c.read.firstLine), ms: 30, sub },
  ];
  if (c.grep) beats.push({ kind: "tool", name: "Grep", input: { pattern: c.grep.pattern, path: c.grep.path, output_mode: "content", "-n": true }, output: c.grep.output, ms: 210, sub });
  beats.push({ kind: "subEnd", id: sub, name: "diagnoser", summary: c.rootCause });
  if (!hasSubagent(spec, "diagnoser")) return beats.filter((b) => b.kind !== "subStart" && b.kind !== "subEnd").map((b) => ({ ...b, sub: undefined }));
  return beats;
}

function diagnosisBeats(c: AgentCase, closing: string): Beat[] {
  return [
    write("artifacts/diagnosis.md", c.diagnosis),
    artifact("diagnosis", "diagnosis.md", c.diagnosis, "text/markdown"),
    { kind: "message", text: closing },
  ];
}

/** The beats of an agent session for one case and task. */
export function caseBeats(c: AgentCase, task: "diagnose" | "repair" | "give_up", spec: StackSpec): Beat[] {
  const beats = diagnoseBeats(c, spec);
  if (task === "diagnose") return [...beats, ...diagnosisBeats(c, c.closingDiagnose)];
  const fixer = toolUseId();
  beats.push({ kind: "subStart", id: fixer, name: "test-fixer", task: "Make the smallest change that turns the failing tests green, then re-run them." });
  const fix = c.fix;
  if (fix) {
    for (const change of fix.changes) {
      for (const e of change.edits) {
        beats.push({ kind: "tool", name: "Edit", input: { file_path: change.path, old_string: e.old, new_string: e.new }, output: `The file ${change.path} has been updated.`, ms: 60, sub: fixer });
      }
    }
  }
  if (task === "give_up") {
    const g = c.giveUp!;
    beats.push(bash(g.tries, fixer));
    beats.push({ kind: "subEnd", id: fixer, name: "test-fixer", summary: "Could not make the test deterministic; the candidate still fails under repetition.", isError: true });
    return [...beats, ...diagnosisBeats(c, g.message)];
  }
  if (!fix) throw new Error("seed: a repair case needs a fix");
  const patch = patchOf(fix.changes);
  beats.push(bash(fix.verify, fixer));
  beats.push({ kind: "subEnd", id: fixer, name: "test-fixer", summary: `Fixed; \`${fix.verify.command}\` passes.` });
  beats.push(bash({ command: "git diff > artifacts/fix.patch && git diff --stat", description: "Save the patch", output: diffStat(fix.changes), ms: 80 }));
  beats.push(artifact("patch", "fix.patch", patch, "text/x-diff"));
  if (hasSubagent(spec, "reviewer")) {
    const reviewer = toolUseId();
    beats.push({ kind: "subStart", id: reviewer, name: "reviewer", task: "Review fix.patch for scope, weakened tests and behaviour changes." });
    beats.push(bash({ command: "git diff", description: "Show the patch", output: patch, ms: 50 }, reviewer));
    beats.push({ kind: "subEnd", id: reviewer, name: "reviewer", summary: fix.review });
  }
  return [...beats, ...diagnosisBeats(c, fix.closingRepair)];
}

export function reportBeats(r: ReportCase): Beat[] {
  const beats: Beat[] = [{ kind: "message", text: r.opening }, ...r.commands.map((c) => bash(c))];
  for (const s of r.subagents) {
    const id = toolUseId();
    beats.push({ kind: "subStart", id, name: s.name, task: s.task }, bash(s.command, id), { kind: "subEnd", id, name: s.name, summary: s.summary });
  }
  beats.push(write(`artifacts/${r.report.name}`, r.report.content), artifact("report", r.report.name, r.report.content, "text/markdown"));
  beats.push({ kind: "message", text: r.closing });
  return beats;
}

// ---------------------------------------------------------------- playing a session

export type SessionTotals = { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; usd: number };

// Sonnet list prices per million tokens: input 3, output 15, cache read 0.30, cache write 3.75.
const usdOf = (t: Omit<SessionTotals, "usd">) =>
  Math.round(t.inputTokens * 3 + t.outputTokens * 15 + t.cacheReadTokens * 0.3 + t.cacheWriteTokens * 3.75) / 1e6;

/**
 * Plays `beats` (all, or the first `upTo`) into the transcript. Returns the
 * artifacts produced and the attempt's token/cost totals (an estimate where
 * the session ended without reporting dollars).
 */
export function playSession(
  tb: Transcript,
  beats: Beat[],
  opts: { sessionId: string; model: string | null; upTo?: number; heartbeatMs?: number; final: boolean },
): { artifacts: (ProducedArtifact & { createdAt: Date })[]; totals: SessionTotals } {
  const played = beats.slice(0, opts.upTo ?? beats.length);
  const artifacts: (ProducedArtifact & { createdAt: Date })[] = [];
  const totals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0 };
  let lastBeat = tb.t;
  const heartbeatEvery = opts.heartbeatMs ?? 30_000;
  const think = (i: number) => 2_500 + ((i * 3_571) % 9_000);

  played.forEach((beat, i) => {
    tb.wait(think(i));
    if (tb.t.getTime() - lastBeat.getTime() > heartbeatEvery) tb.emit("heartbeat", { sessionId: opts.sessionId });
    lastBeat = tb.t;
    const subagentId = "sub" in beat ? beat.sub : undefined;
    if (opts.model) {
      // Each beat is a model turn: the conversation so far is read from the prompt cache.
      totals.cacheReadTokens += 14_500 + i * 2_300;
      totals.cacheWriteTokens += i === 0 ? 16_800 : 900;
    }
    switch (beat.kind) {
      case "message":
        tb.emit("message", { role: "assistant", text: beat.text, subagentId });
        if (opts.model) {
          totals.inputTokens += i === 0 ? 3_100 : 420;
          totals.outputTokens += 140 + Math.round(beat.text.length / 3.2);
          const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = totals;
          // The last turn's totals come with the final cost event instead.
          if (!(opts.final && i === played.length - 1)) tb.emit("cost", { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, model: opts.model });
        }
        break;
      case "tool": {
        const id = toolUseId();
        tb.emit("tool_call", { id, name: beat.name, input: beat.input, startedAt: tb.t.toISOString(), subagentId });
        tb.wait(beat.ms);
        tb.emit("tool_result", { toolCallId: id, output: beat.output, isError: beat.isError ?? false, durationMs: beat.ms, subagentId });
        if (opts.model) {
          totals.inputTokens += 180 + Math.round(beat.output.length / 3.5);
          totals.outputTokens += 90 + Math.round(JSON.stringify(beat.input).length / 3.5);
        }
        break;
      }
      case "subStart":
        tb.emit("subagent_started", { id: beat.id, name: beat.name, parentId: null, summary: beat.task });
        break;
      case "subEnd":
        tb.emit("subagent_completed", { id: beat.id, name: beat.name, parentId: null, summary: beat.summary, isError: beat.isError ?? false });
        break;
      case "artifact": {
        const { digest, sizeBytes } = contentDigest(beat.artifact.content);
        tb.emit("artifact_produced", { artifactId: beat.artifact.id, kind: beat.artifact.kind, name: beat.artifact.name, digest, sizeBytes, mediaType: beat.artifact.mediaType });
        artifacts.push({ ...beat.artifact, createdAt: new Date(tb.t.getTime() - 1) });
        break;
      }
    }
  });
  if (opts.model && played.length > 0) {
    // Claude Code reports dollars at the end of a session; a lost one has none yet.
    totals.usd = usdOf(totals);
    if (opts.final) tb.wait(400).emit("cost", { ...totals, usd: totals.usd, model: opts.model });
  }
  return { artifacts, totals };
}

