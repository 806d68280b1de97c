import type { Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import { notify } from "../notifications/notify";

// A write-back the forge refused tells the repository's people (in-app, and the webhook when
// one is configured), in the transaction that records the failure: one notification per failed
// execution (the key carries the moment it was recorded, so a retry that fails again notifies
// again, and a rolled-back record notifies nobody).

export function notifyWriteBackFailed(
  tx: Tx,
  wb: { id: string; runId: string; kind: WriteBackKind; approvalId: string | null; repositoryId: string; repository: string; pullRequestId: string | null },
  error: string,
  at: Date,
) {
  return notify(tx, {
    kind: "write_back_failed",
    repositoryId: wb.repositoryId,
    title: `Write-back failed: ${wb.kind.replaceAll("_", " ")} on ${wb.repository}`,
    body: `${error}\n\nA maintainer can retry it from ${wb.approvalId ? "the approval" : "the run"}.`,
    href: wb.approvalId ? `/approvals/${wb.approvalId}` : `/runs/${wb.runId}`,
    runId: wb.runId,
    pullRequestId: wb.pullRequestId,
    dedupeKey: `write_back_failed:${wb.id}:${at.toISOString()}`,
  });
}
