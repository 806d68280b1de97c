import type { Tx } from "@/server/db";
import type { WriteBackKind } from "@/server/db/generated/enums";
import { type RequestWriteBackResult, requestWriteBack } from "../approvals/request-write-back";
import type { RunForExecution } from "./claim-attempt";

// A patch artifact asks for its write-back (push the commit to the branch, or update the PR's
// branch) through the one change gate, requestWriteBack: a pending ApprovalRequest with what the
// approver sees, or, when a repository exception covers the kind, a WriteBack executed without
// being held (recorded with its decision and audit). Same transaction as the attempt's end.

export type PatchArtifact = { id: string; kind: "patch"; name: string; digest: string; sizeBytes: number };

export function requestPatchWriteBack(
  tx: Tx,
  opts: { run: RunForExecution; attemptId: string; artifact: PatchArtifact; ttlMs: number; now: Date },
): Promise<RequestWriteBackResult> {
  const { run } = opts;
  const action: WriteBackKind = run.pullRequest ? "update_pr_branch" : "push_commits";
  return requestWriteBack({
    db: tx,
    runId: run.id,
    action,
    target: {
      branch: run.pullRequest?.headRef ?? run.headBranch ?? run.repository.defaultBranch,
      ...(run.pullRequest ? { prNumber: run.pullRequest.number } : {}),
      headSha: run.headSha,
    },
    artifactId: opts.artifact.id,
    attemptId: opts.attemptId,
    ttlMs: opts.ttlMs,
    now: opts.now,
  });
}
