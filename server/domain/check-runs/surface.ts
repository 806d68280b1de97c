// Airlock's own check run on a GitHub pull request (issue 18, item 4). For each failed check
// Airlock has a suggestion for, a check run named "Airlock" on the head commit offers two
// requested actions, "Diagnose with agent" and "Attempt repair"; after a click
// (use-cases/requested-action.ts) the same check run follows the run: queued, in progress,
// completed with a conclusion, its summary and a link to the run page. A run an auto-run rule started gets one too, following
// it from "queued". Only a GitHub App can write check runs (GitHub refuses them to a personal
// token), so a repository without an installation gets none.
//
// No approval gate: this is Airlock's own status surface, like the status GitHub's Copilot agent
// and gh-aw post, written by the app from Airlock's records (run number, status, task), never
// the agent's output. The one piece of agent output it can carry, the diagnosis summary, goes
// through writebacks/diagnosis-comment.ts: the same inert text (inert-text.ts), and only when the change gate
// exempts posting it (the repository allows bot posts); otherwise the check run links to the run.
//
// The surface row is written with the run (evaluation's transaction), and every run transition
// enqueues "checkrun.sync" (runs/transition.ts), one job queue per run so syncs never overlap;
// the sync writes a state to GitHub only when it differs from the one last written.
import type { Db, Tx } from "@/server/db";
import type { Repository } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import type { DispatchableEvent } from "@/server/domain/ci-events/ci-event";
import { inertSummary } from "@/server/domain/inert-text";
import { enqueue } from "@/server/queue/enqueue";

/** The name GitHub shows in the PR's check panel. */
export const CHECK_RUN_NAME = "Airlock";

/** GitHub: at most 3 actions; label and identifier at most 20 characters, description at most 40. */
export const REQUESTED_ACTIONS = [
  { identifier: "diagnose", label: "Diagnose with agent", description: "An agent explains why the check failed", taskKind: "diagnose" },
  { identifier: "repair", label: "Attempt repair", description: "An agent proposes a fix for approval", taskKind: "repair" },
] as const;

export const syncJob = (runId: string) => ({ jobKey: `checkrun.sync:${runId}`, queueName: `checkrun:${runId}`, maxAttempts: 10 });

/**
 * In the evaluation's transaction: a surface for each new run of a GitHub failed check on a
 * repository the app is installed on, and its first sync. A suggestion offers the two actions;
 * a run an auto-run rule started shows as queued from the start and follows the run the same
 * way, so the pull request says Airlock is on it either way. Anything else makes none.
 */
export async function offerOnGithub(tx: Tx, opts: { repository: Repository; event: DispatchableEvent; created: readonly { runId: string; status: string }[] }): Promise<void> {
  const { repository } = opts;
  if (opts.event.type !== "failed_check" || repository.forge !== "github" || repository.githubInstallationId == null) return;
  const followed = opts.created.filter((r) => r.status === "suggested" || r.status === "queued");
  if (followed.length === 0) return;
  const runs = await tx.agentDispatchRun.findMany({ where: { id: { in: followed.map((r) => r.runId) } }, select: { id: true, headSha: true } });
  await tx.checkRunSurface.createMany({
    data: runs.map((r) => ({ runId: r.id, repositoryId: repository.id, installationId: repository.githubInstallationId as bigint, headSha: r.headSha })),
    skipDuplicates: true,
  });
  for (const r of runs) await enqueue(tx, "checkrun.sync", { runId: r.id }, syncJob(r.id));
}

/** runs/transition.ts: a run with a surface syncs it after every transition (one statement, none without a surface). */
export async function followRunOnGithub(tx: Db | Tx, runId: string): Promise<void> {
  const { jobKey, queueName, maxAttempts } = syncJob(runId);
  await tx.$executeRaw`
    SELECT graphile_worker.add_job('checkrun.sync', json_build_object('runId', s."runId"), queue_name => ${queueName}::text, max_attempts => ${maxAttempts}::int, job_key => ${jobKey}::text)
    FROM "CheckRunSurface" s WHERE s."runId" = ${runId}`;
}

export type SurfaceState = "offered" | "queued" | "in_progress" | "awaiting_approval" | "succeeded" | "failed" | "cancelled" | "escalated";

/** What was written to GitHub last: the state, and whether the diagnosis went with it. */
export const stateKey = (state: SurfaceState, withDiagnosis: boolean) => (withDiagnosis ? `${state}+diagnosis` : state);

/** What GitHub is told for each run status. */
export function surfaceStateOf(status: RunStatus): SurfaceState {
  return status === "suggested" ? "offered" : status === "running" ? "in_progress" : status;
}

type Shown = { status: "queued" | "in_progress" | "completed"; conclusion?: "action_required" | "success" | "cancelled" | "neutral"; title: string; actions: boolean };

const SHOWN: Record<SurfaceState, Shown> = {
  offered: { status: "completed", conclusion: "action_required", title: "Airlock can help with this failure", actions: true },
  queued: { status: "queued", title: "Queued", actions: false },
  in_progress: { status: "in_progress", title: "The agent is working", actions: false },
  awaiting_approval: { status: "in_progress", title: "Waiting for a maintainer's approval", actions: false },
  succeeded: { status: "completed", conclusion: "success", title: "Done", actions: false },
  // Never a failing conclusion: Airlock's own check run must not read as a failed check that
  // Airlock's trigger rules would then act on (the pull request's own check stays red anyway).
  failed: { status: "completed", conclusion: "neutral", title: "The run failed", actions: false },
  cancelled: { status: "completed", conclusion: "cancelled", title: "Cancelled", actions: false },
  escalated: { status: "completed", conclusion: "action_required", title: "Escalated to a person", actions: false },
};

export type RunForSurface = { id: string; number: number; title: string; status: RunStatus; taskKind: string; failedCheck: string | null };

/** The check run's fields for a state: GitHub's create/update body without head_sha. */
export function checkRunBody(run: RunForSurface, state: SurfaceState, opts: { detailsUrl: string; diagnosis: string | null }) {
  const shown = SHOWN[state];
  const task = run.taskKind.replaceAll("_", " ");
  // The title and the check's name can come from a fork (a PR title, a workflow's job name): inert like the diagnosis.
  const title = inertSummary(run.title.slice(0, 300)).text;
  const failedCheck = run.failedCheck ? inertSummary(run.failedCheck.slice(0, 200)).text.replaceAll("`", "'") : null;
  const lines = [
    `Run #${run.number}: ${title}`,
    "",
    state === "offered"
      ? `${failedCheck ? `\`${failedCheck}\` failed. ` : ""}Choose **Diagnose with agent** or **Attempt repair** above; a maintainer's click starts it. Every write-back the agent proposes waits for approval in Airlock.`
      : `A ${task} run, ${state.replaceAll("_", " ")}. Its transcript, artifacts and approvals are on the run page.`,
    ...(opts.diagnosis ? ["", "### Diagnosis", "", opts.diagnosis] : []),
  ];
  return {
    name: CHECK_RUN_NAME,
    external_id: run.id,
    details_url: opts.detailsUrl,
    status: shown.status,
    ...(shown.conclusion ? { conclusion: shown.conclusion } : {}),
    output: { title: `${shown.title} (run #${run.number})`, summary: lines.join("\n").slice(0, 60_000) },
    actions: shown.actions ? REQUESTED_ACTIONS.map(({ identifier, label, description }) => ({ identifier, label, description })) : [],
  };
}
