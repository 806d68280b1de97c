import type { Db } from "@/server/db";
import type { RunStatus } from "@/server/db/generated/enums";
import { ChangeFeed, type FeedSubscription } from "./change-feed";

// Status changes for the runs list: a run whose status changed is sent to every list viewer
// allowed to see its repository (the mechanics are ChangeFeed's).

export type StatusSubscription = FeedSubscription;
export type RunStatusChange = { id: string; status: RunStatus; repositoryId: string; lastEventSeq: number; updatedAt: string };

export function runStatusFeed(opts: { db: Db; windowMs: number; log?: (line: string) => void }) {
  return new ChangeFeed({
    event: "run",
    what: "run statuses",
    windowMs: opts.windowMs,
    log: opts.log,
    async read(runIds) {
      const rows = await opts.db.agentDispatchRun.findMany({
        where: { id: { in: runIds } },
        select: { id: true, status: true, repositoryId: true, lastEventSeq: true, updatedAt: true },
      });
      return rows.map((row) => {
        const change: RunStatusChange = { ...row, updatedAt: row.updatedAt.toISOString() };
        return { key: row.id, status: row.status, repositoryId: row.repositoryId, data: change };
      });
    },
  });
}
