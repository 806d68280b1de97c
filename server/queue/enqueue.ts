import type { Db } from "@/server/db";
import { currentTraceParent } from "@/server/observability/tracing";
import { jobs, type JobName, type JobPayload } from "./jobs";

export type EnqueueOptions = {
  /** Deduplicates: a pending job with the same key is replaced, not duplicated. */
  jobKey?: string;
  runAt?: Date;
  maxAttempts?: number;
  /** Jobs in one queue run one at a time, in order. */
  queueName?: string;
  priority?: number;
};

/**
 * Adds a job through graphile-worker's SQL API, on the given client: inside a
 * transaction the job exists only if the transaction commits, so a state
 * change and the work it implies are never separated by a crash.
 */
export async function enqueue<N extends JobName>(db: Db, name: N, payload: JobPayload<N>, opts: EnqueueOptions = {}) {
  // The active trace rides along in the payload (handlers' schemas strip it; see server/observability/jobs.ts).
  const traceParent = currentTraceParent();
  const data = traceParent ? { ...jobs[name].parse(payload), traceParent } : jobs[name].parse(payload);
  await db.$executeRaw`
    SELECT graphile_worker.add_job(
      identifier => ${name}::text,
      payload => ${JSON.stringify(data)}::json,
      queue_name => ${opts.queueName ?? null}::text,
      run_at => ${opts.runAt ?? null}::timestamptz,
      max_attempts => ${opts.maxAttempts ?? 10}::int,
      job_key => ${opts.jobKey ?? null}::text,
      priority => ${opts.priority ?? null}::int
    )`;
}
