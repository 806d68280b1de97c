import type { Prisma, Tx } from "@/server/db";
import type { CheckConclusion } from "@/server/db/generated/enums";
import type { ObservedCheck } from "./attribute";

// Before an agent pass that may leave edits, what CI showed at the head it starts from: the
// latest result of each check at that commit (null while it runs). Written once per attempt in
// the claim's transaction; the pass's patch sets `leftEdits` (an upper bound: a written patch
// counts even if its push is rejected later).

export async function checksAt(tx: Tx, repositoryId: string, headSha: string): Promise<ObservedCheck[]> {
  const pipelines = await tx.pipeline.findMany({
    where: { repositoryId, headSha },
    orderBy: { createdAt: "desc" },
    select: { checkName: true, conclusion: true, status: true },
  });
  const seen = new Map<string, CheckConclusion | null>();
  for (const p of pipelines) if (!seen.has(p.checkName)) seen.set(p.checkName, p.status === "completed" ? p.conclusion : null);
  return [...seen].map(([name, conclusion]) => ({ name, conclusion })).sort((a, b) => a.name.localeCompare(b.name));
}

export async function recordCiObservation(
  tx: Tx,
  opts: { run: { id: string; repositoryId: string; headSha: string; headBranch: string | null; pullRequest: { headRef: string } | null }; attemptId: string; now: Date },
): Promise<void> {
  const branch = opts.run.pullRequest?.headRef ?? opts.run.headBranch;
  // A pass with no branch cannot push anywhere an attribution could later look.
  if (!branch) return;
  const checks = await checksAt(tx, opts.run.repositoryId, opts.run.headSha);
  const row = await tx.agentDispatchRun.findUnique({ where: { id: opts.run.id }, select: { pullRequestId: true } });
  await tx.ciObservation.upsert({
    where: { attemptId: opts.attemptId },
    create: {
      repositoryId: opts.run.repositoryId,
      branch,
      pullRequestId: row?.pullRequestId ?? null,
      runId: opts.run.id,
      attemptId: opts.attemptId,
      headSha: opts.run.headSha,
      checks: checks as unknown as Prisma.InputJsonValue,
      observedAt: opts.now,
    },
    update: {},
  });
}

/** The pass wrote a patch: it may have left edits on the branch. */
export async function markPassLeftEdits(tx: Tx, attemptId: string): Promise<void> {
  await tx.ciObservation.updateMany({ where: { attemptId }, data: { leftEdits: true } });
}
