// The run view's read model of the triage decision behind a run: what was decided, what was done.
import type { Db } from "@/server/db";

export type RunTriageView = {
  id: string;
  disposition: string;
  action: string;
  actionStatus: string;
  actionDetail: string;
  refusal: string | null;
  policyDecisionId: string | null;
  headSha: string;
  checkName: string;
  createdAt: Date;
};

/** The triage of the failure a run is about: linked to the run, else to the run's pipeline. */
export async function getRunTriage(opts: { db: Db; runId: string }): Promise<RunTriageView | null> {
  const run = await opts.db.agentDispatchRun.findUnique({ where: { id: opts.runId }, select: { pipelineId: true } });
  if (!run) return null;
  // One failure can dispatch several rules' runs; the decision is linked to the first of them.
  const row = await opts.db.triageDecision.findFirst({
    where: run.pipelineId ? { OR: [{ runId: opts.runId }, { pipelineId: run.pipelineId }] } : { runId: opts.runId },
    orderBy: { createdAt: "asc" },
    include: { pipeline: { select: { checkName: true } } },
  });
  if (!row) return null;
  return {
    id: row.id,
    disposition: row.disposition,
    action: row.action,
    actionStatus: row.actionStatus,
    actionDetail: row.actionDetail,
    refusal: row.refusal,
    policyDecisionId: row.policyDecisionId,
    headSha: row.headSha,
    checkName: row.pipeline.checkName,
    createdAt: row.createdAt,
  };
}
