import type { Db } from "@/server/db";
import { type AdapterLaunch, type AttemptLaunch, type RanWith, zAttemptLaunch } from "./schemas";
import type { AdmissionDecision } from "../pools/admission";
import type { StackSpec } from "../stacks/spec";

// What an attempt's agent ran with, stored on the attempt when its session starts and shown
// where a person decides on its work (a write-back's approval screen): the exact command line
// and generated files (from the adapter), the environment by name and where each variable comes
// from, and the stack's model, tools and MCP servers, the secrets and config maps by name only.
// Nothing here holds a value: generated files refer to variables as ${NAME}.

/** The record stored on the attempt, from the stack, its admission and the adapter's own report. */
export function attemptLaunch(opts: { spec: StackSpec; admission: AdmissionDecision; adapter: AdmissionAdapterKind; launch: AdapterLaunch | undefined }): AttemptLaunch {
  const { spec, admission } = opts;
  const launch = opts.launch ?? { command: [], files: [], env: [], withheld: [], continuation: null };
  return zAttemptLaunch.parse({
    adapter: opts.adapter,
    model: `${spec.modelProvider}/${spec.model}`.slice(0, 200),
    command: launch.command.slice(0, 200).map((a) => a.slice(0, 40_000)),
    files: launch.files.slice(0, 16).map((f) => ({ name: f.name.slice(0, 200), content: f.content.slice(0, 64_000) })),
    env: launch.env.slice(0, 200),
    tools: spec.tools,
    mcpServers: spec.mcpServers.map((m) => ({ name: m.name, transport: m.transport, target: m.target })),
    secrets: admission.secretsGranted.map((s) => s.name),
    configMaps: admission.configMapsGranted.map((c) => c.name),
    withheld: launch.withheld.slice(0, 200).map((w) => w.slice(0, 1_000)),
    continuation: launch.continuation?.slice(0, 2_000) ?? null,
  });
}

export type AdmissionAdapterKind = AttemptLaunch["adapter"];

/** The stored record, if it parses (an attempt from before records were kept has none). */
export function attemptLaunchOf(value: unknown): AttemptLaunch | null {
  const parsed = zAttemptLaunch.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * What the attempt that did the work ran with: the named attempt (the artifact's), else the
 * run's latest attempt that started. Null when none stored a record.
 */
export async function ranWithOf(db: Db, opts: { runId: string; attemptId: string | null }): Promise<RanWith | null> {
  const attempt = opts.attemptId
    ? await db.dispatchAttempt.findFirst({ where: { id: opts.attemptId, runId: opts.runId }, select: { number: true, launchRecord: true } })
    : await db.dispatchAttempt.findFirst({ where: { runId: opts.runId, startedAt: { not: null } }, orderBy: { number: "desc" }, select: { number: true, launchRecord: true } });
  const launch = attempt ? attemptLaunchOf(attempt.launchRecord) : null;
  return attempt && launch ? { attemptNumber: attempt.number, launch } : null;
}
