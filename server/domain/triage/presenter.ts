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

export async function runTriage(opts: { db: Db; runId: string }): Promise<RunTriageView | null> {
  const row = await opts.db.triageDecision.findFirst({
    where: { runId: opts.runId },
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
