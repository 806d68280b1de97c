import type { Db, Tx } from "@/server/db";
import type { RunCause } from "@/server/db/generated/enums";

// Everyone who caused a run's work: its actor (AgentDispatchRun.actorUserId) and the RunCauser
// rows written by each action a person takes on it (dispatch, retry, resume, fork, a continuation
// prompt, attached context, the rejection a fix run carries), in that action's transaction. With
// the repository's two-person rule on, none of them may approve the run's write-backs.
//
// A child run (resume, fork, fix run) inherits every causer of its parent, the parent's actor
// among them: its prompt is the parent's (or built from it), its context bundle is the parent's,
// and a resume carries the parent's results and last message, so whoever shaped the parent shaped
// the child. Failing closed here costs a second approver; failing open would let one person
// launder a write through a child run.

/** Records that `userId` caused the run's work by `cause` (no-op for automation). */
export async function recordCauser(tx: Tx, opts: { runId: string; userId: string | null; cause: RunCause; sourceRunId?: string }) {
  if (!opts.userId) return;
  await tx.runCauser.createMany({
    data: [{ runId: opts.runId, userId: opts.userId, cause: opts.cause, sourceRunId: opts.sourceRunId ?? opts.runId }],
    skipDuplicates: true,
  });
}

/** The child run inherits its parent's causers and the parent's actor (as `started`, on the parent). */
export async function inheritCausers(tx: Tx, opts: { parent: { id: string; actorUserId: string | null }; childRunId: string }) {
  const rows = await tx.runCauser.findMany({ where: { runId: opts.parent.id }, select: { userId: true, cause: true, sourceRunId: true } });
  const inherited = [
    ...(opts.parent.actorUserId ? [{ userId: opts.parent.actorUserId, cause: "started" as const, sourceRunId: opts.parent.id }] : []),
    ...rows,
  ];
  if (inherited.length === 0) return;
  await tx.runCauser.createMany({ data: inherited.map((r) => ({ ...r, runId: opts.childRunId })), skipDuplicates: true });
}

export type RunCauseOf = { cause: RunCause; sourceRunId: string; sourceRunNumber: number | null };

/** How `userId` caused the run's work (empty: not at all). */
export async function causesOf(db: Db, opts: { run: { id: string; actorUserId: string | null }; userId: string }): Promise<RunCauseOf[]> {
  const rows = await db.runCauser.findMany({
    where: { runId: opts.run.id, userId: opts.userId },
    select: { cause: true, sourceRunId: true },
    orderBy: { createdAt: "asc" },
  });
  // The actor of a child run is the person who resumed or forked it: that row says it better.
  const started = opts.run.actorUserId === opts.userId && !rows.some((r) => r.sourceRunId === opts.run.id);
  const causes = [...(started ? [{ cause: "started" as const, sourceRunId: opts.run.id }] : []), ...rows];
  const unique = causes.filter((c, i) => causes.findIndex((d) => d.cause === c.cause && d.sourceRunId === c.sourceRunId) === i);
  const others = [...new Set(unique.map((c) => c.sourceRunId).filter((id) => id !== opts.run.id))];
  const numbers = new Map(
    others.length > 0 ? (await db.agentDispatchRun.findMany({ where: { id: { in: others } }, select: { id: true, number: true } })).map((r) => [r.id, r.number]) : [],
  );
  return unique.map((c) => ({ ...c, sourceRunNumber: c.sourceRunId === opts.run.id ? null : (numbers.get(c.sourceRunId) ?? null) }));
}

const phrase: Record<RunCause, (run: string) => string> = {
  started: (run) => `started ${run}`,
  dispatched: (run) => `dispatched ${run}`,
  retried: (run) => `retried ${run}`,
  resumed: (run) => `made ${run} by resuming its parent`,
  continued: (run) => `wrote the continuation prompt of ${run}`,
  forked: (run) => `made ${run} by forking its parent`,
  attached_context: (run) => `attached context to ${run}`,
  rejected: (run) => `wrote the rejection ${run} carries`,
};

/** "You dispatched this run and retried it, …": each cause in words, inherited ones naming their run. */
export function describeCauses(causes: readonly RunCauseOf[], runId: string): string {
  const parts = causes.map((c) =>
    c.sourceRunId === runId ? phrase[c.cause]("this run") : `${phrase[c.cause](c.sourceRunNumber ? `run #${c.sourceRunNumber}` : "an earlier run")}, whose work this run continues`,
  );
  return `You ${parts.join("; you ")}`;
}

/**
 * Why the two-person rule refuses `userId` as the approver of this run's write-backs, or null
 * when it does not (the rule is off, or the person caused nothing of the run). The approval gate
 * refuses with this text, and the approval screen and run page show it.
 */
export async function twoPersonRefusal(
  db: Db,
  opts: { run: { id: string; actorUserId: string | null }; twoPersonRule: boolean; userId: string },
): Promise<{ message: string; causes: RunCauseOf[] } | null> {
  if (!opts.twoPersonRule) return null;
  const causes = await causesOf(db, { run: opts.run, userId: opts.userId });
  if (causes.length === 0) return null;
  return { message: `${describeCauses(causes, opts.run.id)}: the repository's two-person rule says someone else must approve its write-backs.`, causes };
}
