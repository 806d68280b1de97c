import type { Prisma, Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import { type StoredAdmission, stackSpecOf } from "../runs/admit-attempt";
import type { PushProtection } from "./push-protection";
import type { LabelChange, Presented, PresentedOpenPr, PresentedRelease, PresentedReleaseGap, PresentedRollBack, RerunPlan, ReviewEvent } from "./schemas";

// What the approver sees, frozen when the request is made: the assembled prompt, context labels,
// the stack with its tools/MCP/skills/subagents, runner pool, runtime and runner service accounts,
// the Secret/ConfigMap access, the action and its target, the artifact and its digest (or, for a
// label flip, the labels added and removed), and why. The shape is zPresented (./schemas.ts).

export type WriteBackTargetInput = { branch?: string; prNumber?: number; check?: string; headSha?: string };

/**
 * What a kind carries beyond its target, shown to the approver and executed as shown: it is
 * frozen into `presented` and copied as is into the WriteBack's target when the write-back is
 * recorded (approval given or gate exempt), where the executor reads it.
 */
export type PresentedExtra = {
  /** review / approve_review: the event posted with the body (approve_review is always APPROVE). */
  review?: { event: ReviewEvent } | null;
  /** rerun_workflow: what is rerun. */
  rerun?: RerunPlan | null;
  openPr?: PresentedOpenPr | null;
  release?: PresentedRelease | null;
  rollBack?: PresentedRollBack | null;
  releaseGap?: PresentedReleaseGap | null;
};

const extraKeys = ["review", "rerun", "openPr", "release", "rollBack", "releaseGap"] as const;

/** The kind's extra fields from a frozen `presented` record, as shown (a release's report text included). */
export function presentedExtraOf(record: unknown): PresentedExtra {
  const obj = record && typeof record === "object" ? (record as Record<string, unknown>) : {};
  return Object.fromEntries(extraKeys.filter((k) => obj[k] != null).map((k) => [k, obj[k]])) as PresentedExtra;
}

/** The same, for a WriteBack's target: what the executor needs (a release's report is kept by digest, not copied). */
export function writeBackExtraOf(record: unknown): PresentedExtra {
  const extra = presentedExtraOf(record);
  if (!extra.release) return extra;
  const { content: _content, cut: _cut, ...report } = extra.release.report;
  return { ...extra, release: { ...extra.release, report } };
}

export type PresentedRun = {
  id: string;
  prompt: string;
  promptHash: string;
  contextDigest: string;
  contextBundle: Prisma.JsonValue;
  stackSnapshot: Prisma.JsonValue;
  stackDigest: string;
  admission: Prisma.JsonValue;
  repository: { fullName: string };
};

/** The context labels the run's bundle was assembled with (its context_assembled event, else the bundle's own fields). */
export async function contextLabelsOf(tx: Tx, run: Pick<PresentedRun, "id" | "contextBundle">): Promise<string[]> {
  const assembled = await tx.runEvent.findFirst({ where: { runId: run.id, type: "context_assembled" }, orderBy: { seq: "desc" }, select: { payload: true } });
  const labels = (assembled?.payload as { labels?: unknown } | null)?.labels;
  if (Array.isArray(labels)) return labels.filter((l): l is string => typeof l === "string");
  const b = run.contextBundle;
  const obj = b && typeof b === "object" && !Array.isArray(b) ? b : {};
  return Object.entries(obj)
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k]) => k);
}

export type PresentedInput = {
  run: Pick<PresentedRun, "prompt" | "promptHash" | "contextDigest" | "stackSnapshot" | "stackDigest" | "repository">;
  contextLabels: string[];
  /** What admission granted the attempt, or null when no attempt was admitted. */
  admission: {
    pool: { name: string; trustTier: string; kind: string } | null;
    runtimeServiceAccount: string | null;
    runnerServiceAccount: string | null;
    secretsGranted: string[];
    secretsDenied: { name: string; reason: string }[];
    configMapsGranted: string[];
    configMapsDenied: { name: string; reason: string }[];
  } | null;
  action: WriteBackKind;
  target: WriteBackTargetInput;
  artifact: { id: string; kind: string; name: string; digest: string; sizeBytes: number } | null;
  message: string | null;
  /** set_labels: what the approver lets change on the PR (read back by presentedLabelChange). */
  labels?: LabelChange | null;
  reason: string;
  exception: string | null;
  /** A patch with secrets: what was found, and that its push is refused until an admin overrides. */
  pushProtection?: PushProtection | null;
  extra?: PresentedExtra;
};

/** The frozen record itself, from what was resolved (pure: the demo seed builds its requests with it too). */
export function presentedOf(opts: PresentedInput): Presented {
  const { run, admission: d } = opts;
  const stack = stackSpecOf(run.stackSnapshot);
  const snapshot = run.stackSnapshot as { name?: string; version?: number } | null;
  return {
    prompt: run.prompt,
    promptHash: run.promptHash,
    contextDigest: run.contextDigest,
    contextLabels: opts.contextLabels,
    stack: {
      name: snapshot?.name ?? null,
      version: snapshot?.version ?? null,
      digest: run.stackDigest,
      model: stack ? `${stack.spec.modelProvider}/${stack.spec.model}` : null,
      adapter: stack?.spec.adapter.kind ?? null,
      tools: stack?.spec.tools ?? [],
      mcpServers: (stack?.spec.mcpServers ?? []).map((m) => ({ name: m.name, transport: m.transport, target: m.target, secrets: m.secrets, configMaps: m.configMaps, privileged: m.privileged })),
      skills: stack?.spec.skills ?? [],
      subagents: (stack?.spec.subagents ?? []).map((s) => ({ name: s.name, role: s.role })),
      approvalMode: stack?.spec.approvalMode ?? "always",
    },
    runnerPool: d?.pool ? { name: d.pool.name, trustTier: d.pool.trustTier, kind: d.pool.kind } : null,
    runtimeServiceAccount: d?.runtimeServiceAccount ?? null,
    runnerServiceAccount: d?.runnerServiceAccount ?? null,
    secrets: { granted: d?.secretsGranted ?? [], denied: d?.secretsDenied ?? [] },
    configMaps: { granted: d?.configMapsGranted ?? [], denied: d?.configMapsDenied ?? [] },
    action: opts.action,
    target: { repository: run.repository.fullName, ...opts.target },
    artifact: opts.artifact,
    message: opts.message,
    labels: opts.labels ?? null,
    reason: opts.reason,
    exception: opts.exception,
    pushProtection: opts.pushProtection ?? null,
    ...presentedExtraOf(opts.extra),
  };
}

export async function buildPresented(tx: Tx, opts: Omit<PresentedInput, "run" | "contextLabels" | "admission"> & { run: PresentedRun }): Promise<Presented> {
  const d = (opts.run.admission as Partial<StoredAdmission> | null)?.decision;
  const admission = d
    ? {
        pool: d.pool,
        runtimeServiceAccount: d.runtimeServiceAccount?.name ?? null,
        runnerServiceAccount: d.runnerServiceAccount?.name ?? null,
        secretsGranted: d.secretsGranted.map((s) => s.name),
        secretsDenied: d.secretsDenied,
        configMapsGranted: d.configMapsGranted.map((c) => c.name),
        configMapsDenied: d.configMapsDenied,
      }
    : null;
  return presentedOf({ ...opts, contextLabels: await contextLabelsOf(tx, opts.run), admission });
}
