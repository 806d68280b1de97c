import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import type { Db } from "@/server/db";
import { stackSpecOf } from "@/server/domain/runs/admit-attempt";
import { systemActor } from "@/server/domain/actor";
import { dispatchRun } from "@/server/domain/runs/dispatch";
import { transaction } from "@/server/db";
import { advisoryLock } from "@/server/db/advisory-lock";
import { recordAudit } from "@/server/domain/audit";
import { zContextBundle } from "@/server/domain/context/context-bundle";
import { renderPrompt } from "@/server/domain/context/prompt";
import { childBundle, createChildRun, parentSelect } from "@/server/domain/runs/child-run";
import { currentStackVersion } from "@/server/domain/stacks/current-version";
import { digestOf } from "@/server/lib/digest";
import { git } from "./git";
import { runLocalCheck } from "./local-ci";
import { bareRepoPath, commitFiles, ensureBareRepo, resolveRevision } from "./repositories";

// The demo loop on one machine: the seeded demo/calculator repository has a real bare
// repository in the local forge whose default branch holds the files the scripted scenario was
// recorded against (so its patch applies; the seed writes it, and this pushes it when missing), the local CI runs its failing check once, the trigger path turns the
// failure into a suggested diagnosis run, and the bootstrap dispatches that suggestion, so
// `npm start` shows a red check, a live run and a patch waiting for approval. Idempotent: each
// step is skipped when its result exists. After the loop the bootstrap starts the scenes a
// newcomer is told about that need live processing: the cost cap, the privileged capability and
// the flaky test.

export const DEMO_REPOSITORY = "demo/calculator";
export const DEMO_SCENARIO = "sum-off-by-one";
/** The stack of the cost-cap scene (seeded): the same recording under a cap it passes. */
export const DEMO_BUDGET_STACK = "scripted-demo-budget";
/** The stack of the privileged-capability scene (seeded): the same recording with a privileged MCP server. */
export const DEMO_PRIVILEGED_STACK = "scripted-demo-privileged";
/**
 * The branch of the privileged-capability scene: its fork works there, not on the demo branch.
 * The fork waits (open) for its launch decision and then for its own patch's approval; on the
 * demo branch it would hold the fix-forward loop, so a newcomer who rejected the demo run's push
 * first saw the rejection deferred behind it. Created at the demo run's commit.
 */
export const DEMO_PRIVILEGED_BRANCH = "privileged-capability";
/** The branch of the flaky-test scene (seeded): a test that passed there before fails in the sandbox. */
export const DEMO_FLAKY_BRANCH = "due-date-zone";
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
  /** Start the story's live scenes after the loop (default true). */
  scenes?: boolean;
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
  if (opts.scenes === false) return { summary, sha, pipelineId: pipeline.id, runId: run.id };
  const scenes = [await forkScene(opts, run.id, COST_CAP_SCENE), await forkScene(opts, run.id, PRIVILEGED_SCENE), await flakyScene(opts)].filter((s) => s !== null);
  return { summary: [summary, ...scenes].join("; "), sha, pipelineId: pipeline.id, runId: run.id };
}

type ForkSceneSpec = {
  stack: string;
  scene: string;
  title: (parent: { number: number; title: string }, limitUsd: number) => string;
  /** A branch of its own, made at the demo run's commit (default: the demo run's branch). */
  branch?: string;
};

/**
 * The cost-cap scene: a fork of the demo run onto the budget stack (the same recording under a
 * cap its usage passes), which the worker runs like any run until the meter stops the session at
 * the cap.
 */
const COST_CAP_SCENE: ForkSceneSpec = {
  stack: DEMO_BUDGET_STACK,
  scene: "the cost-cap scene",
  title: (p, cap) => `Fork of #${p.number} under a $${cap} cost cap: ${p.title}`,
};

/**
 * The privileged-capability scene: a fork of the demo run onto a stack with a privileged MCP
 * server; admission holds its attempt until a person approves exactly what it launches with.
 */
const PRIVILEGED_SCENE: ForkSceneSpec = {
  stack: DEMO_PRIVILEGED_STACK,
  scene: "the privileged-capability scene",
  title: (p) => `Fork of #${p.number} with a privileged MCP server: ${p.title}`,
  branch: DEMO_PRIVILEGED_BRANCH,
};

/**
 * A scene started on purpose as a fork of the demo run, once per demo run and stack. Like a fix
 * run, it acts for the demo run's trigger rule: the bootstrap is no person, and admission reads
 * that rule as its authority. Scenes serialise on an advisory lock named for the demo run, not on
 * its row: the worker is running that run and locks its row to move it, and a scene holding the
 * row while creating the child deadlocked against it (40P01).
 */
async function forkScene(opts: { db: Db; dataDir: string }, runId: string, spec: ForkSceneSpec): Promise<string | null> {
  const { db } = opts;
  const target = await db.agentStack.findUnique({ where: { name: spec.stack }, select: { id: true } });
  if (!target) return null;
  if (spec.branch) {
    const from = await db.agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, select: { headSha: true, repository: { select: { fullName: true } } } });
    const path = bareRepoPath(opts.dataDir, from.repository.fullName);
    // Created only where missing (the empty old value): a branch the fork already pushed to stays.
    if (!(await resolveRevision(path, spec.branch))) await git(["--git-dir", path, "update-ref", `refs/heads/${spec.branch}`, from.headSha, ""]);
  }
  return transaction(db, "demoForkScene", async (tx) => {
    await advisoryLock(tx, `demo-fork-scene:${runId}`);
    if (await tx.agentDispatchRun.findFirst({ where: { parentRunId: runId, stackId: target.id }, select: { id: true } })) return null;
    const parent = await tx.agentDispatchRun.findUniqueOrThrow({ where: { id: runId }, select: parentSelect });
    const stack = await currentStackVersion(tx, target.id);
    const bundle = zContextBundle.parse(childBundle(parent, "fork", spec.branch));
    const { prompt } = renderPrompt(stack.spec.promptTemplate, bundle, digestOf(bundle));
    const child = await createChildRun(tx, {
      parent,
      source: "fork",
      actor: DEMO_ACTOR,
      cause: "forked",
      prompt,
      title: spec.title(parent, stack.spec.limits.maxCostUsd),
      stack,
      triggerRuleId: parent.triggerRuleId,
      ...(spec.branch ? { headBranch: spec.branch } : {}),
      reason: `the demo bootstrap forked run #${parent.number} onto ${spec.stack} (${spec.scene})`,
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
    return `forked it onto ${spec.stack} as run ${child.id} (${spec.scene})`;
  });
}

/**
 * The flaky-test scene: the local CI runs the check of the due-date-zone branch, whose test
 * passed there before (the seed records that pass) and fails in the sandbox. Triage reads it as
 * flaky and reruns it once; the rerun fails the same way, and triage escalates to the owners.
 * All of it is the trigger path's own processing; this only runs the first check, once.
 */
async function flakyScene(opts: { db: Db; dataDir: string; ciTimeoutMs: number; toolchainNodeModules: string | null }): Promise<string | null> {
  const { db } = opts;
  const repo = await db.repository.findUnique({ where: { fullName: DEMO_REPOSITORY }, select: { id: true, fullName: true } });
  if (!repo) return null;
  const sha = await resolveRevision(bareRepoPath(opts.dataDir, repo.fullName), DEMO_FLAKY_BRANCH);
  if (!sha) return null;
  if (await db.pipeline.findFirst({ where: { repositoryId: repo.id, headSha: sha, conclusion: { not: "success" } }, select: { id: true } })) return null;
  const result = await runLocalCheck({ db, dataDir: opts.dataDir, repositoryId: repo.id, sha, branch: DEMO_FLAKY_BRANCH, timeoutMs: opts.ciTimeoutMs, toolchainNodeModules: opts.toolchainNodeModules });
  return `ran the check of ${DEMO_FLAKY_BRANCH} (${result.externalId} ${result.conclusion}; the flaky-test scene)`;
}
