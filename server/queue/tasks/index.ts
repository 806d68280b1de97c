import type { Task, TaskList } from "graphile-worker";
import { tracedTask } from "@/server/observability/jobs";
import type { JobName } from "../jobs";
import type { WorkerContext } from "../worker-context";
import { bootstrapDemoTask } from "./bootstrap-demo";
import { checkRunSyncTask } from "./check-run-sync";
import { dispatchRunTask } from "./dispatch-run";
import { evaluateDeliveryTask } from "./evaluate-delivery";
import { executeWriteBackTask } from "./execute-write-back";
import { escalateFixLoopTask, launchFixRunTask, reviewAgainTask } from "./fix-loop";
import { deliverNotificationTask } from "./deliver-notification";
import { flakyScanTask, flakyTickTask } from "./flaky-scan";
import { reapAttemptsTask } from "./reap-attempts";
import { settleRerunTask } from "./settle-rerun";
import { approvalDecidedTask, runEndedTask } from "./reactions";
import { runCheckTask } from "./run-check";
import { triageRerunTask } from "./triage-rerun";
import { triageRollBackTask } from "./triage-roll-back";

// The task registry: one handler per job contract in ../jobs.ts. Each handler parses its
// payload with parseJobPayload and is idempotent (graphile-worker retries a job whose worker died).

export function createTaskList(ctx: WorkerContext): TaskList {
  const tasks: Record<JobName, Task> = {
    "delivery.evaluate": (payload) => evaluateDeliveryTask(payload, { db: ctx.db }),
    "run.dispatch": (payload) => dispatchRunTask(payload, ctx),
    "attempts.reap": (payload) => reapAttemptsTask(payload, ctx),
    "ci.run": (payload) => runCheckTask(payload, ctx),
    "demo.bootstrap": (payload) => bootstrapDemoTask(payload, ctx),
    "writeback.execute": (payload) => executeWriteBackTask(payload, ctx),
    "fixloop.launch": (payload) => launchFixRunTask(payload, ctx),
    "fixloop.escalate": (payload) => escalateFixLoopTask(payload, ctx),
    "fixloop.review": (payload) => reviewAgainTask(payload, ctx),
    "notification.deliver": (payload) => deliverNotificationTask(payload, ctx),
    "triage.rerun": (payload) => triageRerunTask(payload, ctx),
    "rerun.settle": (payload) => settleRerunTask(payload, ctx),
    "triage.rollBack": (payload) => triageRollBackTask(payload, ctx),
    "flaky.tick": (payload) => flakyTickTask(payload, ctx),
    "flaky.scan": (payload) => flakyScanTask(payload, ctx),
    "run.ended": (payload) => runEndedTask(payload, ctx),
    "approval.decided": (payload) => approvalDecidedTask(payload, ctx),
    "checkrun.sync": (payload) => checkRunSyncTask(payload, ctx),
  };
  // Each job continues the trace it was added in (server/observability/jobs.ts).
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, tracedTask(ctx.db, name, task)]));
}
