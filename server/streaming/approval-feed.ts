import type { Db } from "@/server/db";
import type { ApprovalStatus } from "@/server/db/generated/enums";
import { ChangeFeed, type FeedSubscription } from "./change-feed";

// Changes to approval requests for /approvals: every request, decision and write-back outcome
// appends an event to its run, so the requests of the runs touched in the last window are read
// (one query for all) and a request that is new or whose status changed is sent to every queue
// viewer allowed to see its repository. A run streaming its transcript costs one cheap query
// per window, no frames. The mechanics are ChangeFeed's.

export type ApprovalSubscription = FeedSubscription;
export type ApprovalChange = { id: string; runId: string; repositoryId: string; status: ApprovalStatus };

export function approvalFeed(opts: { db: Db; windowMs: number; log?: (line: string) => void }) {
  return new ChangeFeed({
    event: "approval",
    what: "approval requests",
    windowMs: opts.windowMs,
    log: opts.log,
    async read(runIds) {
      const rows = await opts.db.approvalRequest.findMany({
        where: { runId: { in: runIds } },
        select: { id: true, runId: true, status: true, run: { select: { repositoryId: true } } },
      });
      return rows.map((row) => {
        const change: ApprovalChange = { id: row.id, runId: row.runId, repositoryId: row.run.repositoryId, status: row.status };
        return { key: row.id, status: row.status, repositoryId: change.repositoryId, data: change };
      });
    },
  });
}
