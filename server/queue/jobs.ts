import { z } from "zod";

// Jobs as data: a name and a zod payload per job. New payload fields must be
// optional so jobs already queued survive a deploy. Handlers are idempotent:
// graphile-worker retries a job whose worker died.

const zDeliveryRef = z.object({ deliveryId: z.string().min(1) });

/** The most deliveries one "delivery.evaluate" job names (ingest groups a statement's rows by it). */
export const DELIVERY_BATCH_MAX = 64;

export const jobs = {
  /**
   * Evaluate stored webhook/local-CI deliveries against the trigger rules: one, or a batch (what
   * one ingest statement recorded; graphile-worker re-queues only a batch's failed entries).
   */
  "delivery.evaluate": z.union([zDeliveryRef, z.array(zDeliveryRef).min(1).max(DELIVERY_BATCH_MAX)]),
  /** Admit and start the next attempt of a queued run. */
  "run.dispatch": z.object({ runId: z.string().min(1) }),
  /** Mark attempts whose heartbeats stopped as lost, and retry within the bound. */
  "attempts.reap": z.object({}).passthrough().default({}),
  /** Run a repository's check command in the local CI (a clean checkout at one commit). */
  "ci.run": z.object({
    repositoryId: z.string().min(1),
    /** A commit, or the branch's tip when absent. */
    sha: z.string().min(7).max(64).optional(),
    branch: z.string().min(1).max(200).optional(),
    /** A rerun an agent run asked for: the new Pipeline links to it. */
    triggeredByRunId: z.string().min(1).optional(),
  }),
  /** Execute an approved (or exempt) write-back through the forge, at most once. */
  "writeback.execute": z
    .object({ approvalId: z.string().min(1).optional(), writeBackId: z.string().min(1).optional() })
    .refine((p) => p.approvalId !== undefined || p.writeBackId !== undefined, "approvalId or writeBackId is required"),
  /** Prepare the demo repository in the local forge and run its check once (idempotent). */
  "demo.bootstrap": z.object({}).passthrough().default({}),
  /** Launch the fix run a pending fix-forward intent stands for (once; a failure burns it). */
  "fixloop.launch": z.object({ intentId: z.string().min(1) }),
  /** Escalate a fix-forward loop at its bound to a person (bounded tries). */
  "fixloop.escalate": z.object({ intentId: z.string().min(1) }),
  /** A fix run's patch was pushed: ask the rejecting reviewer (or the local PR) for review again. */
  "fixloop.review": z.object({ intentId: z.string().min(1) }),
  /** POST one notification to the configured webhook; bounded, idempotent once delivered. */
  "notification.deliver": z.object({ notificationId: z.string().min(1) }),
  /**
   * A run ended (runs/transition.ts enqueues it with the ending): the areas that react to an
   * ending do so here (the fix loop takes up a rejection deferred behind the run). Idempotent.
   */
  "run.ended": z.object({ runId: z.string().min(1), status: z.string().min(1).max(40).optional() }),
  /**
   * An approval changed status (approvals/transition.ts), or a write-back without an approval
   * was recorded: the run awaiting approval settles once nothing is left open. Idempotent.
   */
  "approval.decided": z.object({ runId: z.string().min(1), approvalId: z.string().min(1).optional(), status: z.string().min(1).max(40).optional() }),
  /**
   * The minute's flaky-scan tick (the worker's crontab, every minute): queues a flaky.scan for
   * each rule whose schedule fires. `_cron.ts` is the minute graphile-worker ran it for.
   */
  "flaky.tick": z.object({ _cron: z.object({ ts: z.string().min(1).max(40) }).partial().optional() }).passthrough().default({}),
  /** Scan one flaky-scan rule at one minute (scheduled or "Scan now"), once per rule and minute. */
  "flaky.scan": z.object({ ruleId: z.string().min(1), at: z.iso.datetime(), requestedBy: z.string().min(1).max(200) }),
  /** Write a run's state to its check run on GitHub (check-runs/sync.ts), once per state. */
  "checkrun.sync": z.object({ runId: z.string().min(1) }),
  /** Read a GitHub rerun write-back's result until it completes; then its Pipeline settles and check_rerun is emitted, once. */
  "rerun.settle": z.object({ writeBackId: z.string().min(1), tries: z.number().int().min(0).max(1000).optional() }),
  /** Rerun a failed GitHub check that CI triage decided to rerun once (at most once per decision). */
  "triage.rerun": z.object({ triageId: z.string().min(1) }),
  /** The roll-back CI triage decided, made an approval item on the failure's run (once per run). */
  "triage.rollBack": z.object({ triageId: z.string().min(1) }),
} as const;

export type JobName = keyof typeof jobs;
export type JobPayload<N extends JobName> = z.infer<(typeof jobs)[N]>;

export function parseJobPayload<N extends JobName>(name: N, payload: unknown): JobPayload<N> {
  return jobs[name].parse(payload ?? {}) as JobPayload<N>;
}
