import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import type { Db } from "@/server/db";
import { stackSpecOf } from "@/server/domain/runs/admit-attempt";
import { systemActor } from "@/server/domain/actor";
import { dispatchRun } from "@/server/domain/runs/dispatch";
import { transaction } from "@/server/db";
import { recordAudit } from "@/server/domain/audit";
import { zContextBundle } from "@/server/domain/context/context-bundle";
import { renderPrompt } from "@/server/domain/context/prompt";
import { childBundle, createChildRun, parentSelect } from "@/server/domain/runs/child-run";
import { currentStackVersion } from "@/server/domain/stacks/current-version";
import { digestOf } from "@/server/lib/digest";
import { runLocalCheck } from "./local-ci";
import { bareRepoPath, commitFiles, ensureBareRepo, resolveRevision } from "./repositories";

// The demo loop on one machine: the seeded demo/calculator repository has a real bare
// repository in the local forge whose default branch holds the files the scripted scenario was
// recorded against (so its patch applies; the seed writes it, and this pushes it when missing), the local CI runs its failing check once, the trigger path turns the
// failure into a suggested diagnosis run, and the bootstrap dispatches that suggestion, so
// `npm start` shows a red check, a live run and a patch waiting for approval. Idempotent: each
// step is skipped when its result exists.

export const DEMO_REPOSITORY = "demo/calculator";
export const DEMO_SCENARIO = "sum-off-by-one";
/** The stack of the cost-cap scene (seeded): the same recording under a cap it passes. */
export const DEMO_BUDGET_STACK = "scripted-demo-budget";
const DEMO_ACTOR = systemActor("airlock demo bootstrap");
// A fixed commit date makes the demo's commit id the same on every machine.
const DEMO_COMMIT_DATE = new Date("2026-01-05T09:00:00Z");

export type DemoResult = { summary: string; sha?: string; pipelineId?: string; runId?: string };

export async function bootstrapDemo(opts: {
  db: Db;
  dataDir: string;
  ciTimeoutMs: number;
  toolchainNodeModules: string | null;
  log?: (line: string) => void;
  /** How long to wait for the trigger path to create the run (default 60 s). */
  runWaitMs?: number;
}): Promise<DemoResult> {
  const { db } = opts;
  const repo = await db.repository.findUnique({ where: { fullName: DEMO_REPOSITORY } });
  if (!repo) return { summary: `no ${DEMO_REPOSITORY} repository (the demo seed did not run)` };
  const files = getBuiltInScenario(DEMO_SCENARIO)?.assumes?.files;
  if (!files) return { summary: `scenario ${DEMO_SCENARIO} has no repository files` };

  const { path } = await ensureBareRepo(opts.dataDir, repo.fullName, repo.defaultBranch);
  let sha = await resolveRevision(path, repo.defaultBranch);
  if (!sha) {
    sha = await commitFiles({ repoPath: path, branch: repo.defaultBranch, files, message: "Add sum() and invoice totals", date: DEMO_COMMIT_DATE });
    opts.log?.(`demo: pushed ${sha.slice(0, 12)} to ${bareRepoPath(opts.dataDir, repo.fullName)}`);
  }

  // The check of this commit on the default branch: the seed may hold older checks of the same
  // commit on another branch (it was pushed to a feature branch first).
  let pipeline = await db.pipeline.findFirst({
    where: { repositoryId: repo.id, headSha: sha, headBranch: repo.defaultBranch },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
  if (!pipeline) {
    const result = await runLocalCheck({
      db,
      dataDir: opts.dataDir,
      repositoryId: repo.id,
      sha,
      timeoutMs: opts.ciTimeoutMs,
      toolchainNodeModules: opts.toolchainNodeModules,
    });
    opts.log?.(`demo: local CI ${result.externalId} ${result.conclusion} (exit ${result.exitCode ?? "none"}) in ${result.durationMs} ms`);
    pipeline = { id: result.pipelineId };
  }

  // The trigger path (delivery.evaluate) creates the runs from the failed check; wait for the
  // scripted demo agent's (other matching rules, e.g. a Claude diagnoser, may add their own).
  const deadline = Date.now() + (opts.runWaitMs ?? 60_000);
  let run = null as { id: string; status: string } | null;
  while (Date.now() < deadline) {
    const runs = await db.agentDispatchRun.findMany({
      where: { pipelineId: pipeline.id },
      orderBy: { createdAt: "asc" },
      select: { id: true, status: true, stackSnapshot: true },
    });
    run = runs.find((r) => stackSpecOf(r.stackSnapshot)?.spec.adapter.kind === "scripted") ?? null;
    if (run) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!run) return { summary: "the failed check created no scripted demo run (no trigger rule matched?)", sha, pipelineId: pipeline.id };
  let summary = `the demo run ${run.id} is ${run.status}`;
  if (run.status === "suggested") {
    await dispatchRun({ db, actor: DEMO_ACTOR, runId: run.id });
    summary = `dispatched the suggested run ${run.id}`;
  }
  const capped = await costCapScene(db, run.id);
  return { summary: capped ? `${summary}; ${capped}` : summary, sha, pipelineId: pipeline.id, runId: run.id };
}

/**
 * The cost-cap scene, started on purpose: a fork of the demo run onto the budget stack (the same
 * recording under a cap its usage passes), which the worker runs like any run until the meter
 * stops the session at the cap. Like a fix run, it acts for the demo run's trigger rule: the
 * bootstrap is no person, and admission reads that rule as its authority. Once per demo run.
 */
async function costCapScene(db: Db, runId: string): Promise<string | null> {
  const budget = await db.agentStack.findUnique({ where: { name: DEMO_BUDGET_STACK }, select: { id: true } });
  if (!budget) return null;
  return transaction(db, "demoCostCapScene", async (tx) => {
    const parent = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, select: parentSelect });
    if (await tx.agentDispatchRun.findFirst({ where: { parentRunId: runId, stackId: budget.id }, select: { id: true } })) return null;
    const stack = await currentStackVersion(tx, budget.id);
    const bundle = zContextBundle.parse(childBundle(parent, "fork"));
    const { prompt } = renderPrompt(stack.spec.promptTemplate, bundle, digestOf(bundle));
    const child = await createChildRun(tx, {
      parent,
      source: "fork",
      actor: DEMO_ACTOR,
      cause: "forked",
      prompt,
      title: `Fork of #${parent.number} under a $${stack.spec.limits.maxCostUsd} cost cap: ${parent.title}`,
      stack,
      triggerRuleId: parent.triggerRuleId,
      reason: `the demo bootstrap forked run #${parent.number} onto ${DEMO_BUDGET_STACK} (the cost-cap scene)`,
      now: new Date(),
    });
    await recordAudit(tx, {
      actor: DEMO_ACTOR,
      action: "run.fork",
      objectType: "AgentDispatchRun",
      objectId: child.id,
      repositoryId: parent.repositoryId,
      detail: { parentRunId: parent.id, promptEdited: false, stackDigest: stack.digest },
    });
    return `forked it onto ${DEMO_BUDGET_STACK} as run ${child.id} (the cost-cap scene)`;
  });
}
