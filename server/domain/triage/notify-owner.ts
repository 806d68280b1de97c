// The notification a triage escalation or roll-back sends to the repository's owners: one per
// triage decision (its dedupe key), in the evaluation's transaction.
import type { Repository, TriageDecision, Tx } from "@/server/db";
import { notify } from "@/server/domain/notifications/notify";

export async function notifyOwner(
  tx: Tx,
  opts: { triage: TriageDecision; repository: Repository; checkName: string; pullRequestId: string | null; ruleName: string | null; why?: string },
): Promise<{ id: string; created: boolean }> {
  const { triage, repository, checkName } = opts;
  const sha = triage.headSha.slice(0, 12);
  const rollBack = triage.action === "roll_back_request";
  const decided = triage.refusal
    ? `The triage policy could not decide (${triage.refusal}), so a person decides.`
    : opts.ruleName
      ? `Triage rule ${opts.ruleName} decided ${triage.disposition.replaceAll("_", " ")}.`
      : `No triage rule classified this failure (${triage.disposition.replaceAll("_", " ")} by default).`;
  const why = opts.why ?? decided;
  return notify(tx, {
    kind: rollBack ? "triage_rollback" : "triage_escalated",
    repositoryId: repository.id,
    title: rollBack ? `Roll back ${sha} in ${repository.fullName}? ${checkName} failed` : `${checkName} failed at ${sha} in ${repository.fullName}: needs its owner`,
    body: `${why} ${triage.actionDetail}`.slice(0, 4000),
    href: triage.runId ? `/runs/${triage.runId}` : "/runs",
    runId: triage.runId,
    pullRequestId: opts.pullRequestId,
    dedupeKey: `triage:${triage.id}`,
  });
}
