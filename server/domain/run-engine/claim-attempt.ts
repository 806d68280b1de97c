import type { Db, Prisma } from "@/server/db";
import type { SandboxAvailable } from "../pools/sandbox-admission";
import { transaction } from "@/server/db";
import type { AttemptStatus } from "@/server/db/generated/enums";
import { appendRunEvents } from "../events/append";
import { recordCiObservation } from "../fixloop/observe";
import type { RunEventInput } from "../events/catalogue";
import { admissionEventPayload, type AdmissionDecision } from "../pools/admission";
import { loadCurrentPolicy } from "../policy/decide";
import { currentLaunch, gatePrivilegedLaunch, markLaunched } from "../approvals/privileged-capability";
import { admissionFor, loadAdmissionInputs, loadPools, planAdmission, stackSpecOf, storeAdmissionDecisions, storedAdmission } from "../runs/admit-attempt";
import { checkDailyCostCap, reserveDailyCost } from "../runs/daily-cost-cap";
import { disabledProblem } from "../runs/disabled";
import { launchChanges, privilegedCapabilities } from "../approvals/privileged-launch";
import type { AttemptFence } from "../runs/attempt-fence";
import { isTerminalRun } from "../runs/lifecycle";
import { lockRun, queueAttempt, startAttemptInPool, transitionAttempt, transitionRun } from "../runs/transition";

// The first step of the `run.dispatch` job: pick the run's queued attempt, admit it (pool,
// service accounts, grants, actor role), check the pool's concurrency, and move the attempt to
// `starting`, all in one transaction holding the run row lock and then the pool row lock. The
// pool lock serialises admissions per pool, so counting its active attempts and claiming a slot
// cannot race: a pool never runs more than `concurrency` attempts. Idempotent: a redelivered job
// finds nothing queued and returns `skipped`.
//
// Dispatch latency is mostly round trips, so the transaction holds only what must be decided
// under the locks: everything read-only (the run, pools, grants, the actor's role, the current
// policy) is read before it in two parallel rounds, admission is evaluated there too, and the
// transaction stores its two policy decisions in one statement before the attempt may start.

export const runForExecution = {
  id: true,
  number: true,
  title: true,
  status: true,
  repositoryId: true,
  taskKind: true,
  isFork: true,
  originReason: true,
  actor: true,
  actorUserId: true,
  triggerRuleId: true,
  stackId: true,
  stackSnapshot: true,
  stackDigest: true,
  contextBundle: true,
  contextDigest: true,
  prompt: true,
  promptHash: true,
  headSha: true,
  headBranch: true,
  admission: true,
  repository: {
    select: { fullName: true, forge: true, cloneUrl: true, trustTier: true, defaultBranch: true, writeBackExceptions: true, botCommentsAllowed: true },
  },
  pullRequest: { select: { number: true, headRef: true } },
} satisfies Prisma.AgentDispatchRunSelect;

export type RunForExecution = Prisma.AgentDispatchRunGetPayload<{ select: typeof runForExecution }>;

/**
 * The run as `runForExecution` selects it, in one round trip (Prisma would read the repository
 * and pull request in two more). claim-attempt.int.test.ts checks the two agree.
 */
export async function readRunForExecution(db: Db, runId: string): Promise<RunForExecution | null> {
  const [row] = await db.$queryRaw<RunForExecution[]>`
    SELECT r."id", r."number", r."title", r."status"::text AS "status", r."repositoryId", r."taskKind"::text AS "taskKind",
           r."isFork", r."originReason", r."actor", r."actorUserId", r."triggerRuleId", r."stackId", r."stackSnapshot", r."stackDigest",
           r."contextBundle", r."contextDigest", r."prompt", r."promptHash", r."headSha", r."headBranch", r."admission",
           json_build_object(
             'fullName', g."fullName", 'forge', g."forge", 'cloneUrl', g."cloneUrl", 'trustTier', g."trustTier",
             'defaultBranch', g."defaultBranch", 'writeBackExceptions', g."writeBackExceptions",
             'botCommentsAllowed', g."botCommentsAllowed"
           ) AS "repository",
           CASE WHEN p."id" IS NULL THEN NULL ELSE json_build_object('number', p."number", 'headRef', p."headRef") END AS "pullRequest"
    FROM "AgentDispatchRun" r
    JOIN "Repository" g ON g."id" = r."repositoryId"
    LEFT JOIN "PullRequest" p ON p."id" = r."pullRequestId"
    WHERE r."id" = ${runId}`;
  return row ?? null;
}

export type ClaimResult =
  | {
      kind: "started";
      run: RunForExecution;
      attempt: { id: string; number: number; fencingToken: number };
      fence: AttemptFence;
      admission: AdmissionDecision;
      pool: { id: string; name: string; kind: "local" | "kubernetes"; namespace: string };
    }
  | { kind: "waiting"; reason: string }
  /** Its privileged capabilities wait for a person: the run is awaiting approval, the attempt queued. */
  | { kind: "awaiting_approval"; approvalId: string; reason: string }
  | { kind: "refused"; reason: string }
  | { kind: "skipped"; reason: string };

export async function claimNextAttempt(opts: {
  db: Db;
  runId: string;
  /** Who holds the attempt (host/pid/worker pool), stored as its runnerRef. */
  workerRef: string;
  kubernetesAvailable: boolean;
  /** Whether this worker can run sandboxes; admission refuses untrusted local attempts without one. */
  sandbox?: SandboxAvailable;
  now?: () => Date;
}): Promise<ClaimResult> {
  const now = opts.now ?? (() => new Date());
  // Read-only inputs first, in parallel: the run's immutable parts, the pools with their load and
  // the policy's current version; then the actor's role and the grants. Everything that decides
  // (status, attempts, pool capacity) is read again under the locks.
  const [run, pools, policy] = await Promise.all([
    readRunForExecution(opts.db, opts.runId),
    loadPools(opts.db),
    loadCurrentPolicy(opts.db, "runner_selection"),
  ]);
  if (!run) return { kind: "skipped", reason: "the run no longer exists" };
  if (run.status !== "queued" && !isTerminalRun(run.status)) return { kind: "skipped", reason: `the run is ${run.status}` };
  const preInputs = run.status === "queued" ? await loadAdmissionInputs(opts.db, run, { pools }) : null;
  const plan = preInputs ? planAdmission({ inputs: preInputs, policy, kubernetesAvailable: opts.kubernetesAvailable, sandbox: opts.sandbox }) : null;
  return transaction(opts.db, "claimNextAttempt", async (tx) => {
    const locked = await lockRun(tx, opts.runId, { admission: true });
    if (locked === null) return { kind: "skipped", reason: "the run no longer exists" };
    const status = locked.status;
    run.status = status;
    run.admission = locked.admission;
    // Raw SQL on this path: each ORM query costs the worker more CPU than its round trip.
    const attempts = await tx.$queryRaw<{ id: string; number: number; status: AttemptStatus; fencingToken: number; queuedAt: Date }[]>`
      SELECT "id", "number", "status"::text AS "status", "fencingToken", "queuedAt"
      FROM "DispatchAttempt" WHERE "runId" = ${opts.runId} ORDER BY "number" DESC`;

    if (status !== "queued") {
      // A cancelled or failed run may still have an attempt waiting in the queue: close it.
      const waiting = attempts.filter((a) => a.status === "queued");
      if (isTerminalRun(status) && waiting.length > 0) {
        const reason = `the run is ${status}`;
        const events: RunEventInput[] = [];
        for (const a of waiting) await transitionAttempt(tx, { runId: opts.runId, attempt: a, to: "cancelled", reason, now: now(), events });
        await appendRunEvents({ db: tx, runId: opts.runId, events });
      }
      return { kind: "skipped", reason: `the run is ${status}` };
    }
    const active = attempts.find((a) => a.status === "starting" || a.status === "running");
    if (active) return { kind: "skipped", reason: `attempt ${active.number} is already ${active.status}` };
    // Every event of the claim is appended once, at the end (one seq range, one NOTIFY).
    const events: RunEventInput[] = [];
    const attempt =
      attempts.find((a) => a.status === "queued") ??
      (await queueAttempt(tx, { runId: opts.runId, reason: "the run was queued", now: now(), deferEvents: events, attempts }));

    // The run was queued again since the pre-read (it was terminal then): its inputs are read under the lock.
    const basis = async () =>
      preInputs ? { inputs: preInputs, policy } : { inputs: await loadAdmissionInputs(tx, run), policy: await loadCurrentPolicy(tx, "runner_selection") };
    const stack = stackSpecOf(run.stackSnapshot);
    const privileged = (d: AdmissionDecision) => stack !== null && privilegedCapabilities(d, stack.spec).length > 0;

    // The queued attempt fails before it starts, and the run with it (admission, a disabled
    // repository or the daily cost cap refused it).
    const failBeforeStart = async (attemptReason: string, runReason: string) => {
      const at = now();
      await transitionAttempt(tx, { runId: run.id, attempt: { id: attempt.id, number: attempt.number, status: "queued" }, to: "failed", reason: attemptReason, now: at, events });
      await transitionRun(tx, { runId: run.id, from: "queued", to: "failed", reason: runReason, now: at, attemptId: attempt.id, before: events });
    };

    // A repository disabled since the run was queued starts nothing more.
    const repository = await tx.repository.findUniqueOrThrow({ where: { id: run.repositoryId }, select: { fullName: true, disabledAt: true, disabledReason: true, disabledBy: true } });
    const disabled = disabledProblem(repository, "starting its runs");
    if (disabled) {
      events.push({ type: "log", payload: { stream: "system", text: `Attempt ${attempt.number} not started: ${disabled}` } });
      await failBeforeStart(`refused: ${disabled}`, `attempt ${attempt.number} refused: ${disabled}`);
      return { kind: "refused", reason: disabled };
    }

    let decision = admissionFor(run.admission, attempt.id);
    if (decision && privileged(decision) && decision.pool) {
      // A stored admission with privileged capabilities launches only if its grants still hold
      // as they were: admission is checked again on its pool, and any change re-admits (and asks again).
      const { inputs, policy: current } = await basis();
      const poolId = decision.pool.id;
      const recheck = planAdmission({ inputs: { ...inputs, pools: inputs.pools.filter((p) => p.id === poolId) }, policy: current, kubernetesAvailable: opts.kubernetesAvailable, sandbox: opts.sandbox });
      const [was, now_] = await Promise.all([currentLaunch(tx, run, decision), currentLaunch(tx, run, recheck.decision)]);
      if (!was || !now_ || was.digest !== now_.digest) {
        events.push({ type: "log", payload: { stream: "system", text: `Attempt ${attempt.number}: its grants changed since admission (${was && now_ ? launchChanges(was.record, now_.record).join(", ") : "it is no longer admitted"}); it is admitted again.` } });
        decision = null;
      }
    }
    if (!decision) {
      const planned = plan ?? planAdmission({ ...(await basis()), kubernetesAvailable: opts.kubernetesAvailable, sandbox: opts.sandbox });
      decision = await storeAdmissionDecisions(tx, { runId: run.id, attemptId: attempt.id, plan: planned });
      const stored = storedAdmission(decision, attempt, now());
      run.admission = stored as Prisma.JsonValue;
      await tx.$executeRaw`
        UPDATE "AgentDispatchRun" SET "admission" = ${JSON.stringify(stored)}::jsonb, "runnerPoolId" = ${decision.pool?.id ?? null}, "updatedAt" = ${now()}
        WHERE "id" = ${run.id}`;
      events.push(
        { type: "admission", payload: admissionEventPayload(decision) },
        {
          type: "log",
          payload: {
            stream: "system",
            text: [
              `Admission of attempt ${attempt.number}: ${decision.actor.verdict}.`,
              ...decision.poolsSkipped.map((s) => `Pool ${s.name} not used: ${s.reason}.`),
              ...decision.secretsDenied.map((s) => `Secret ${s.name} refused: ${s.reason}.`),
              ...decision.configMapsDenied.map((c) => `Config map ${c.name} refused: ${c.reason}.`),
            ].join("\n"),
          },
        },
      );
      if (!decision.admitted) {
        const refusal = decision.refusal ?? "admission refused the attempt";
        await failBeforeStart(`admission refused: ${refusal}`, `admission refused attempt ${attempt.number}: ${refusal}`);
        return { kind: "refused", reason: refusal };
      }
    }
    const chosen = decision.pool;
    if (!chosen) return { kind: "refused", reason: decision.refusal ?? "no pool" };

    // The repository's daily cost cap: checked and reserved under its lock, before the pool's
    // (every claimer takes them in this order), so concurrent claims cannot both pass it.
    const spec = stackSpecOf(run.stackSnapshot)?.spec;
    const daily = spec ? await checkDailyCostCap(tx, { repositoryId: run.repositoryId, attemptId: attempt.id, spec, now: now() }) : ({ kind: "none" } as const);
    if (daily.kind === "refused") {
      const reason = `refused by the daily cost cap: ${daily.reason}`;
      events.push({ type: "log", payload: { stream: "system", text: `Attempt ${attempt.number} ${reason}.` } });
      await failBeforeStart(reason, `attempt ${attempt.number} ${reason}`);
      return { kind: "refused", reason: daily.reason };
    }

    // Privileged capabilities wait for a person (or a change-gate exception) before anything launches.
    let launchApproval: string | null = null;
    if (privileged(decision)) {
      const current = await currentLaunch(tx, run, decision);
      if (!current) return { kind: "refused", reason: "the attempt's launch could not be resolved" };
      const gate = await gatePrivilegedLaunch(tx, { run, attempt, current, events, now: now() });
      if (gate.kind === "held") return { kind: "awaiting_approval", approvalId: gate.approvalId, reason: gate.reason };
      launchApproval = gate.approvalId;
    }

    // FOR NO KEY UPDATE: serialises claimers of this pool, yet does not conflict with the key-share
    // locks that foreign keys to the pool take (attempt/run rows naming it), which would deadlock.
    const [pool] = await tx.$queryRaw<{ concurrency: number }[]>`
      SELECT "concurrency" FROM "RunnerPool" WHERE "id" = ${chosen.id} FOR NO KEY UPDATE`;
    const flushWaiting = async (reason: string) => {
      if (events.length > 0) await appendRunEvents({ db: tx, runId: run.id, attemptId: attempt.id, events });
      return { kind: "waiting" as const, reason };
    };
    if (!pool) return flushWaiting(`pool ${chosen.name} no longer exists`);
    // Count the pool's active attempts and take the slot in one statement (read after the pool
    // lock, so no other claimer's slot can be missing from the count).
    const at = now();
    const slot = await startAttemptInPool(tx, {
      attempt,
      pool: { id: chosen.id, name: chosen.name, concurrency: pool.concurrency },
      workerRef: opts.workerRef,
      runtimeServiceAccount: decision.runtimeServiceAccount?.name ?? null,
      runnerServiceAccount: decision.runnerServiceAccount?.name ?? null,
      now: at,
    });
    if (!slot.claimed) return flushWaiting(`pool ${chosen.name} is at its concurrency (${slot.busy} of ${pool.concurrency})`);
    if (daily.kind === "ok") await reserveDailyCost(tx, { attemptId: attempt.id, reserveUsd: daily.reserveUsd, now: at });
    events.push(
      { type: "queue", payload: { phase: "dequeued", attemptNumber: attempt.number, poolName: chosen.name, waitMs: Math.max(0, at.getTime() - attempt.queuedAt.getTime()) } },
      slot.event,
    );
    await appendRunEvents({ db: tx, runId: run.id, attemptId: attempt.id, events });
    if (launchApproval) await markLaunched(tx, { approvalId: launchApproval, runId: run.id, attemptNumber: attempt.number, now: at });
    await recordCiObservation(tx, { run, attemptId: attempt.id, now: at });
    return {
      kind: "started",
      run,
      attempt: { id: attempt.id, number: attempt.number, fencingToken: attempt.fencingToken },
      fence: { runId: run.id, attemptId: attempt.id, fencingToken: attempt.fencingToken },
      admission: decision,
      pool: { id: chosen.id, name: chosen.name, kind: chosen.kind, namespace: decision.runtimeServiceAccount?.namespace ?? "airlock" },
    };
  });
}
