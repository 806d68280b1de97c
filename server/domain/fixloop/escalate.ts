import type { Db, Tx } from "@/server/db";
import { transaction } from "@/server/db";
import type { NotifyInput, NotifyResult } from "@/server/domain/notifications/notify";
import { requestWriteBack } from "../approvals/request-write-back";
import { appendRunEvents } from "../events/append";
import { escalationFlip } from "./labels";
import { fixLoopLockKey, intendEscalation, maxEscalationTries } from "./spawn";
import { advisoryLock } from "@/server/db/advisory-lock";
import { logEvent } from "@/server/observability/log";

// "fixloop.escalate": the loop hands the branch to a person, once. In one transaction: the
// loop's state becomes escalated (from then on no fix run starts), the PR's label flip
// (`agentReadyLabel` -> `humanReadyLabel`) and the round digest comment are asked for as
// write-backs through the change gate (each held for approval unless the gate exempts it, like
// any write-back), and a notification is recorded. Airlock's copy of the PR's labels is not
// flipped here: it shows what the forge has until the set_labels write-back executes; the
// pending flip is shown on its approval. A try that throws is marked failed and the next try is
// intended, up to `maxEscalationTries`; then the loop stops and logs an error.

/** The notifications contract (server/domain/notifications/notify.ts), injected by the task. */
export type Notify = (db: Tx, input: NotifyInput & { kind: "fix_loop_escalated" }) => Promise<NotifyResult>;

export type EscalateResult =
  | {
      kind: "escalated";
      digest: string;
      /** The digest comment: its approval, or its write-back when exempt. */
      approvalId: string | null;
      writeBackId: string | null;
      /** The label flip (absent without a PR): its approval, or its write-back when exempt. */
      labels: { approvalId: string | null; writeBackId: string | null } | null;
    }
  | { kind: "skipped"; reason: string }
  | { kind: "failed"; error: string; retried: boolean };

type Round = { n: number; rejectedBy: string; rejection: string; run: { number: number; status: string } | null; changed: string; outcome: string };

function patchSummary(patch: string | null | undefined): string {
  if (!patch) return "no patch";
  const files = new Set<string>();
  let added = 0;
  let removed = 0;
  for (const line of patch.split("\n")) {
    if (line.startsWith("+++ ")) files.add(line.slice(4).replace(/^b\//, ""));
    else if (line.startsWith("+") && !line.startsWith("+++")) added++;
    else if (line.startsWith("-") && !line.startsWith("---")) removed++;
  }
  return `${[...files].join(", ") || "a patch"} (+${added} -${removed})`;
}

/** The escalation comment: each round's rejection, what its fix run changed, why it still fails. */
export function escalationDigest(opts: { branch: string; bound: number; rounds: Round[]; lastRejection: { by: string; text: string } }): string {
  const lines = [
    `Airlock's fix-forward loop stopped on \`${opts.branch}\` after ${opts.rounds.length} of ${opts.bound} fix runs; a person takes over.`,
    "",
  ];
  for (const r of opts.rounds) {
    lines.push(
      `### Round ${r.n}`,
      `- Rejected by ${r.rejectedBy}: ${r.rejection.replace(/\s+/g, " ").slice(0, 600)}`,
      `- Fix run: ${r.run ? `#${r.run.number} (${r.run.status.replaceAll("_", " ")})` : "did not launch"}; changed ${r.changed}`,
      `- Still failing because: ${r.outcome}`,
      "",
    );
  }
  lines.push(`Last rejection, by ${opts.lastRejection.by}: ${opts.lastRejection.text.replace(/\s+/g, " ").slice(0, 1000)}`);
  return lines.join("\n");
}

async function loadRounds(tx: Tx, intent: { repositoryId: string; branch: string }, since: Date | null, last: { by: string; text: string }): Promise<Round[]> {
  const intents = await tx.fixSpawnIntent.findMany({
    where: { repositoryId: intent.repositoryId, branch: intent.branch, kind: "fix", ...(since ? { createdAt: { gt: since } } : {}) },
    orderBy: { createdAt: "asc" },
  });
  const rounds: Round[] = [];
  for (const [i, it] of intents.entries()) {
    const run = it.runId
      ? await tx.agentDispatchRun.findUnique({
          where: { id: it.runId },
          select: {
            number: true,
            status: true,
            artifacts: { where: { kind: "patch" }, orderBy: { createdAt: "desc" }, take: 1, select: { content: true } },
            approvals: { where: { status: "rejected" }, orderBy: { decidedAt: "desc" }, take: 1, select: { reason: true } },
            attempts: { orderBy: { number: "desc" }, take: 1, select: { exitReason: true } },
          },
        })
      : null;
    const next = intents[i + 1];
    const outcome =
      it.outcome === "failed"
        ? `the fix run could not launch: ${it.error ?? "unknown error"}`
        : run?.approvals[0]?.reason != null
          ? `its patch was rejected: ${run.approvals[0].reason}`
          : next
            ? `the next review still requested changes: ${next.rejection}`
            : run && ["failed", "cancelled"].includes(run.status)
              ? `the fix run ${run.status}: ${run.attempts[0]?.exitReason ?? "no reason recorded"}`
              : `the latest review still requests changes: ${last.text}`;
    rounds.push({
      n: i + 1,
      rejectedBy: it.rejectedBy,
      rejection: it.rejection,
      run: run ? { number: run.number, status: run.status } : null,
      changed: patchSummary(run?.artifacts[0]?.content),
      outcome: outcome.replace(/\s+/g, " ").slice(0, 600),
    });
  }
  return rounds;
}

/** The error as stored: without the transaction helper's "[tx name] " prefix, bounded. */
export function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^(\[tx \w+\] )+/, "").slice(0, 2000);
}

export type EscalateHooks = { beforeCommit?: () => Promise<void> | void };

export async function escalateFixLoop(opts: { db: Db; intentId: string; notify: Notify; now?: Date; log?: (line: string) => void; hooks?: EscalateHooks }): Promise<EscalateResult> {
  const now = opts.now ?? new Date();
  try {
    return await transaction(opts.db, "escalateFixLoop", async (tx) => {
      const [locked] = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "FixSpawnIntent" WHERE "id" = ${opts.intentId} FOR UPDATE`;
      const intent = locked ? await tx.fixSpawnIntent.findUnique({ where: { id: opts.intentId } }) : null;
      if (!intent || intent.kind !== "escalate" || intent.outcome !== "pending") return { kind: "skipped", reason: "no pending escalation" } as const;
      await advisoryLock(tx, fixLoopLockKey(intent.repositoryId, intent.branch));
      const key = { repositoryId_branch: { repositoryId: intent.repositoryId, branch: intent.branch } };
      const state = await tx.fixLoopState.findUnique({ where: key });
      if (state?.escalatedAt) {
        await tx.fixSpawnIntent.update({ where: { id: intent.id }, data: { outcome: "launched", error: "already escalated" } });
        return { kind: "skipped", reason: "already escalated" } as const;
      }
      const repo = await tx.repository.findUniqueOrThrow({ where: { id: intent.repositoryId } });
      const author = intent.parentRunId
        ? await tx.agentDispatchRun.findUnique({ where: { id: intent.parentRunId }, select: { id: true, number: true } })
        : null;
      if (!author) throw new Error("the escalation names no authoring run");
      const pr = intent.pullRequestId ? await tx.pullRequest.findUnique({ where: { id: intent.pullRequestId } }) : null;
      const rounds = await loadRounds(tx, intent, state?.resetAt ?? null, { by: intent.rejectedBy, text: intent.rejection });
      const digest = escalationDigest({ branch: intent.branch, bound: repo.maxFixAttempts, rounds, lastRejection: { by: intent.rejectedBy, text: intent.rejection } });

      await tx.fixLoopState.upsert({
        where: key,
        create: { repositoryId: intent.repositoryId, branch: intent.branch, pullRequestId: intent.pullRequestId, escalatedAt: now, escalationDigest: digest },
        update: { escalatedAt: now, escalationDigest: digest, pullRequestId: intent.pullRequestId ?? state?.pullRequestId ?? null },
      });
      let labels: { approvalId: string | null; writeBackId: string | null } | null = null;
      if (pr) {
        await tx.pullRequest.update({ where: { id: pr.id }, data: { escalatedAt: now } });
        // The flip goes through the change gate like any write-back; its execution (after commit) calls the forge.
        const flip = await requestWriteBack({ db: tx, runId: author.id, action: "set_labels", target: { branch: intent.branch, prNumber: pr.number }, labels: escalationFlip(repo), now });
        labels = flip.kind === "approval" ? { approvalId: flip.approvalId, writeBackId: null } : { approvalId: null, writeBackId: flip.writeBackId };
      }
      // The digest goes through the change gate like any write-back (held for approval unless exempt).
      const requested = await requestWriteBack({
        db: tx,
        runId: author.id,
        action: "comment",
        target: { branch: intent.branch, ...(pr ? { prNumber: pr.number } : {}) },
        message: digest,
        now,
      });
      const posted = requested.kind === "approval" ? { approvalId: requested.approvalId, writeBackId: null } : { approvalId: null, writeBackId: requested.writeBackId };
      await tx.fixSpawnIntent.update({ where: { id: intent.id }, data: { outcome: "launched" } });
      await appendRunEvents({
        db: tx,
        runId: author.id,
        events: [{ type: "log", payload: { stream: "system", text: `fix-forward loop on ${intent.branch} escalated to a person after ${rounds.length} fix runs` } }],
      });
      await opts.notify(tx, {
        kind: "fix_loop_escalated",
        repositoryId: repo.id,
        title: `${repo.fullName}: ${pr ? `#${pr.number}` : intent.branch} needs a person`,
        body: digest,
        // The authoring run's page shows the loop (rounds, digest, re-open); there is no loop page.
        href: `/runs/${encodeURIComponent(author.id)}`,
        runId: author.id,
        pullRequestId: pr?.id ?? null,
        dedupeKey: `fix_loop_escalated:${repo.id}:${intent.branch}:${state?.resetAt?.getTime() ?? 0}`,
      });
      await opts.hooks?.beforeCommit?.();
      return { kind: "escalated", digest, ...posted, labels } as const;
    });
  } catch (err) {
    const error = errorText(err);
    return failEscalation(opts.db, opts.intentId, error, now, opts.log ?? ((line) => logEvent("process", { }, { source: "fixloop" }, line, "error")));
  }
}

async function failEscalation(db: Db, intentId: string, error: string, now: Date, log: (line: string) => void): Promise<EscalateResult> {
  return transaction(db, "failEscalation", async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "FixSpawnIntent" WHERE "id" = ${intentId} FOR UPDATE`;
    const intent = locked ? await tx.fixSpawnIntent.findUnique({ where: { id: intentId } }) : null;
    if (!intent || intent.outcome !== "pending") return { kind: "skipped", reason: "the escalation was settled meanwhile" } as const;
    await tx.fixSpawnIntent.update({ where: { id: intent.id }, data: { outcome: "failed", error } });
    const state = await tx.fixLoopState.findUnique({ where: { repositoryId_branch: { repositoryId: intent.repositoryId, branch: intent.branch } } });
    const next = await intendEscalation(
      tx,
      { repositoryId: intent.repositoryId, branch: intent.branch, pullRequestId: intent.pullRequestId, rejectedRunId: null, text: intent.rejection, by: intent.rejectedBy, key: intent.dedupeKey, authoringRunId: intent.parentRunId ?? "", resetAt: state?.resetAt ?? null },
      now,
    );
    const retried = next.kind === "escalation_intended";
    if (!retried) log(`error: escalation of ${intent.branch} (repository ${intent.repositoryId}) gave up after ${maxEscalationTries} tries; last error: ${error}`);
    return { kind: "failed", error, retried } as const;
  });
}
