import { Logger, runOnce } from "graphile-worker";
import { type Db, getDb } from "@/server/db";
import { requireDatabaseUrl } from "@/server/env";
import { approvalDecidedTask, runEndedTask } from "../tasks/reactions";

// Lifecycle reactions are jobs (queue/tasks/reactions.ts), so a test that used to see them
// happen inside the call that changed the state waits for them instead: runReactions works the
// queued `run.ended` / `approval.decided` jobs with graphile-worker itself (runOnce, limited to
// those two tasks) until none is left, chains included (a settled run's own run.ended).

const silent = new Logger(() => () => {});

export async function runReactions(opts: { db?: Db } = {}): Promise<void> {
  const ctx = { db: opts.db ?? getDb(), log: () => {} };
  await runOnce({
    connectionString: requireDatabaseUrl(),
    noHandleSignals: true,
    logger: silent,
    taskList: {
      "run.ended": (payload) => runEndedTask(payload, ctx),
      "approval.decided": (payload) => approvalDecidedTask(payload, ctx),
    },
  });
}
