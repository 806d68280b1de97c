import { getBuiltInScenario } from "@/server/execution/agents/scenarios";
import type { Db } from "@/server/db";
import { stackSpecOf } from "@/server/domain/runs/admit-attempt";
import { systemActor } from "@/server/domain/actor";
import { dispatchRun } from "@/server/domain/runs/dispatch";
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
  if (run.status === "suggested") {
    await dispatchRun({ db, actor: DEMO_ACTOR, runId: run.id });
    return { summary: `dispatched the suggested run ${run.id}`, sha, pipelineId: pipeline.id, runId: run.id };
  }
  return { summary: `the demo run ${run.id} is ${run.status}`, sha, pipelineId: pipeline.id, runId: run.id };
}
