import { enqueueDispatch } from "@/server/domain/runs/attempts";
import { claimNextAttempt } from "@/server/domain/run-engine/claim-attempt";
import { availabilityOf, probeSandbox } from "@/server/execution/sandbox/probe";
import { parseJobPayload } from "../jobs";
import { executeAttempt } from "@/server/execution/runner/execute-attempt";
import type { WorkerContext } from "../worker-context";

// "run.dispatch": claim the run's queued attempt (admission, pool concurrency) and start it.
// The job ends as soon as the attempt is handed to this process's runner; the attempt's
// liveness is its heartbeat lease from then on, not the job's lock, so long attempts never
// hold a job slot and a dead worker's attempt is recovered by the reaper. Idempotent: a repeat
// finds nothing queued.

const capacityRetryMs = 1_000;

export async function dispatchRunTask(payload: unknown, ctx: WorkerContext): Promise<void> {
  const { runId } = parseJobPayload("run.dispatch", payload);
  if (ctx.inflight.size + ctx.claiming.count >= ctx.settings.maxAttempts) {
    // This process is full: leave the run to another worker, or to us a moment later.
    await enqueueDispatch(ctx.db, runId, new Date(Date.now() + capacityRetryMs));
    return;
  }
  ctx.claiming.count++;
  let claim;
  try {
    const sandbox = ctx.settings.sandbox ?? availabilityOf(await probeSandbox());
    claim = await claimNextAttempt({ db: ctx.db, runId, workerRef: ctx.workerRef(), kubernetesAvailable: ctx.settings.kube !== null, sandbox });
  } finally {
    ctx.claiming.count--;
  }
  if (claim.kind === "waiting") {
    await enqueueDispatch(ctx.db, runId, new Date(Date.now() + capacityRetryMs));
    return;
  }
  if (claim.kind !== "started") {
    ctx.log(`run ${runId}: ${claim.kind} (${claim.reason})`);
    return;
  }
  // The scheduling decision, for operators: pool, accounts, grant names (never values).
  const a = claim.admission;
  ctx.log(
    `run ${claim.run.number} attempt ${claim.attempt.number}: admitted on ${claim.pool.name} ` +
      `(runtime ${a.runtimeServiceAccount?.name ?? "-"}, runner ${a.runnerServiceAccount?.name ?? "-"}); ` +
      `secrets ${a.secretsGranted.map((g) => g.name).join(",") || "none"}; refused ${a.secretsDenied.map((d) => d.name).join(",") || "none"}`,
  );
  const done = executeAttempt({ db: ctx.db, settings: ctx.settings, registry: ctx.registry, log: ctx.log }, claim)
    .catch((err: unknown) => ctx.log(`run ${runId}: attempt crashed: ${(err as Error).stack ?? String(err)}`))
    .then(() => wakeQueuedRuns(ctx, claim.pool.id));
  ctx.inflight.add(done);
  void done.finally(() => ctx.inflight.delete(done));
}

/** A slot on the pool is free: nudge the oldest runs waiting for it instead of letting them poll. */
async function wakeQueuedRuns(ctx: WorkerContext, poolId: string): Promise<void> {
  const waiting = await ctx.db.agentDispatchRun.findMany({
    where: { status: "queued", runnerPoolId: poolId },
    orderBy: { createdAt: "asc" },
    select: { id: true },
    take: 3,
  });
  for (const run of waiting) await enqueueDispatch(ctx.db, run.id).catch(() => undefined);
}
