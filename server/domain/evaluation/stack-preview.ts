import { claudeCodeLaunchPlan, previewPaths } from "@/server/execution/agents/claude-code/launch-plan";
import type { Db } from "@/server/db";
import { loadKnownSecrets } from "@/server/domain/ingest/known-secrets";
import { parseInput } from "@/server/domain/input";
import { zStackPreviewInput, type PreviewSource } from "@/server/domain/stacks/schemas";
import type { StackSpec } from "@/server/domain/stacks/spec";
import { specOf } from "@/server/domain/stacks/stacks-service";
import type { Candidate } from "@/server/domain/triggers/matcher";
import type { TriggerRule } from "@/server/domain/triggers/trigger-rule";
import { AppError } from "@/server/errors";
import { canonicalJson } from "@/server/lib/canonical-json";
import { assembleCandidate } from "./assemble-candidate";
import { permissionFor } from "./dispatch";
import { loadDelivery, type LoadedEvent, type UnusableEvent } from "./load";
import { liveRulesFor, planEvaluation } from "./plan";
import { loadJobEvent, recentRecordedEvents } from "./recorded-events";

// The stack editor's live preview: what a run of the (unsaved) stack would get for a recent
// failure of a repository. The failure is loaded and planned by the live trigger path's own
// functions (load.ts, plan.ts); the firing rule that uses this stack is the candidate (or, when
// none does, a hypothetical rule with no match keys), and assembleCandidate builds the bundle and
// the prompt: the function the trigger path uses. Previewing a stored delivery before it is
// evaluated therefore gives the very prompt, bundle digest and stack digest the run will get.

type PreviewInput = ReturnType<typeof parsePreview>;
const parsePreview = (input: unknown) => parseInput(zStackPreviewInput, input);

/** Recent failures of a repository, to preview a stack against. */
export async function previewSources(opts: { db: Db; repositoryId: string }) {
  const events = await recentRecordedEvents({ db: opts.db, repositoryIds: [opts.repositoryId], limit: 15, failuresOnly: true });
  return events.map((e) => ({
    ref: e.ref,
    label: e.label,
    at: e.at,
    problem: e.ok ? null : e.problem,
    summary:
      e.ok && e.event.type === "failed_check"
        ? {
            workflow: e.event.workflowName,
            job: e.event.jobName,
            step: e.event.step,
            headSha: e.event.headSha,
            branch: e.facts.headBranch,
            pullRequest: e.facts.pullRequestNumber,
          }
        : null,
  }));
}

async function loadSource(db: Db, repositoryId: string, source: PreviewSource): Promise<LoadedEvent | UnusableEvent> {
  if (source.kind === "delivery") {
    const row = await db.webhookDelivery.findUnique({
      where: { deliveryId: source.deliveryId },
      select: { deliveryId: true, source: true, event: true, action: true, payload: true, receivedAt: true },
    });
    if (!row) throw new AppError("NOT_FOUND", "No such delivery.", { reason: "no_such_delivery" });
    return loadDelivery(db, row);
  }
  const job = await db.job.findUnique({ where: { id: source.jobId }, select: { pipeline: { select: { repositoryId: true } } } });
  if (!job || job.pipeline.repositoryId !== repositoryId) throw new AppError("NOT_FOUND", "No such job in this repository.", { reason: "no_such_job" });
  return loadJobEvent(db, source.jobId);
}

/** Which stack version a run would cite: the current one if nothing changed, else the next. */
async function versionFor(db: Db, stackId: string | null, name: string, spec: StackSpec) {
  if (stackId === null) return { id: "unsaved", version: 1, saved: false };
  const stack = await db.agentStack.findUnique({ where: { id: stackId }, select: { id: true, name: true, version: true } });
  if (!stack) throw new AppError("NOT_FOUND", "No such stack.", { reason: "no_such_stack" });
  const row = await db.agentStackVersion.findUniqueOrThrow({ where: { stackId_version: { stackId, version: stack.version } }, select: { spec: true } });
  const unchanged = stack.name === name && canonicalJson(specOf(row.spec)) === canonicalJson(spec);
  return { id: stack.id, version: unchanged ? stack.version : stack.version + 1, saved: unchanged };
}

/** The candidate the live path would create for this stack, or one from a hypothetical rule. */
type Chosen = { candidate: Candidate; hypothetical: boolean; unmatched: { ruleName: string; reason: string }[] };

async function candidateFor(db: Db, loaded: LoadedEvent, stackId: string, input: PreviewInput): Promise<Chosen> {
  const unmatched: Chosen["unmatched"] = [];
  if (input.stackId !== null) {
    const rules = await liveRulesFor(db, loaded.repository.id);
    const live = planEvaluation(loaded, rules);
    const mine = live.fire.find((c) => c.stackId === input.stackId);
    if (mine) return { candidate: mine, hypothetical: false, unmatched };
    // Why this stack's own rules did not start it: shown beside the hypothetical run.
    const own = new Set(rules.filter((r) => r.stackId === input.stackId).map((r) => r.id));
    for (const s of live.skipped) if (s.ruleId !== null && own.has(s.ruleId)) unmatched.push({ ruleName: s.ruleName ?? s.ruleId, reason: s.reason });
    for (const s of live.superseded) if (own.has(s.candidate.ruleId)) unmatched.push({ ruleName: s.candidate.ruleName, reason: s.why });
  }
  const rule: TriggerRule = {
    id: `preview-${stackId}`,
    name: "preview (no rule of this stack matches this failure)",
    kind: "failed_check",
    repositoryId: loaded.repository.id,
    workflow: null,
    job: null,
    step: null,
    branchGlob: null,
    pathFilters: [],
    failureSignature: null,
    stackId,
    taskKind: input.taskKind,
    action: "suggest",
    enabled: true,
  };
  const result = planEvaluation(loaded, [rule]);
  const candidate = result.fire[0];
  if (!candidate) {
    const why = result.refusal ?? result.skipped.map((s) => s.reason).join("; ");
    throw new AppError("UNPROCESSABLE", `This failure would not start a run: ${why}`, { reason: "not_dispatchable" });
  }
  return { candidate, hypothetical: true, unmatched };
}

export async function previewStack(opts: { db: Db; input: unknown; now: Date }) {
  const input = parsePreview(opts.input);
  const loaded = await loadSource(opts.db, input.repositoryId, input.source);
  if (!loaded.ok) throw new AppError("UNPROCESSABLE", `This event cannot start a run: ${loaded.problem}`, { reason: "not_dispatchable" });
  if (loaded.repository.id !== input.repositoryId) throw new AppError("NOT_FOUND", "No such event in this repository.", { reason: "no_such_event" });
  if (loaded.event.type !== "failed_check") throw new AppError("UNPROCESSABLE", "Pick a failed check to preview against.", { reason: "not_a_failure" });
  if (loaded.facts.headSha === null) throw new AppError("UNPROCESSABLE", "The failure's head commit is unknown.", { reason: "no_head_sha" });

  const ref = await versionFor(opts.db, input.stackId, input.name, input.spec);
  const { candidate, hypothetical, unmatched } = await candidateFor(opts.db, loaded, ref.id, input);
  const stack = { id: ref.id, name: input.name, version: ref.version, spec: input.spec };
  const assembled = assembleCandidate({
    event: loaded.event,
    candidate,
    repository: loaded.repository,
    facts: loaded.facts,
    permission: permissionFor(loaded.event),
    stack,
    deliveryId: loaded.deliveryId,
    eventName: loaded.eventName,
    secrets: await loadKnownSecrets(opts.db, opts.now),
  });
  const { bundle } = assembled.context;
  const byName = <T extends { name: string }>(items: readonly T[]) => [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    source: {
      label: loaded.label,
      /** A failed job with no delivery: the delivery id and actor are the ones local CI would send. */
      fromJobRow: loaded.ref.kind === "job",
    },
    candidate: { ruleName: candidate.ruleName, hypothetical, taskKind: candidate.taskKind, action: candidate.action, reason: candidate.reason, unmatched },
    stack: {
      id: stack.id,
      name: stack.name,
      version: stack.version,
      /** False: the version a save would create. */
      saved: ref.saved,
      digest: assembled.stackDigest,
      model: `${input.spec.modelProvider}/${input.spec.model}`,
      adapter: input.spec.adapter,
      toolProfile: bundle.stack.toolProfile,
      tools: bundle.stack.tools,
      mcpServers: byName(input.spec.mcpServers),
      skills: bundle.stack.skills,
      subagents: byName(input.spec.subagents),
      approvalMode: input.spec.approvalMode,
      limits: input.spec.limits,
      /** The Claude Code command line and generated files a run would start with (secrets by name). */
      launch: input.spec.adapter.kind === "claude-code" ? claudeCodeLaunchPlan(input.spec, input.spec.adapter, previewPaths, {
        secrets: new Set(bundle.identity.secretGrants.map((g) => g.secretName)),
        configMaps: new Set(bundle.identity.configGrants.map((g) => g.configMapName)),
      }) : null,
    },
    policy: bundle.policy,
    identity: bundle.identity,
    contextLabels: bundle.contextLabels.map((l) => l.name),
    contextDigest: assembled.context.digest,
    prompt: assembled.prompt.prompt,
    promptHash: assembled.prompt.promptHash,
    variables: assembled.prompt.variables,
    redaction: bundle.redaction.status,
  };
}

export type StackPreview = Awaited<ReturnType<typeof previewStack>>;
