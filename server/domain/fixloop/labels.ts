import type { Db, Tx } from "@/server/db";
import type { Forge } from "@/server/forges/types";
import { enqueue } from "@/server/queue/enqueue";

// The ready-for-agent / ready-for-human flip on the forge. The escalation (and "re-open for
// agents") flips Airlock's copy of the PR's labels in its transaction and enqueues this job
// there too, so the forge call happens once the flip is committed and never inside it. The
// forge call is idempotent (adding a present label or removing an absent one is done), so a
// retried job changes nothing twice; one queue per PR keeps an escalation's flip and a later
// re-open's flip in order.

export type LabelFlip = { pullRequestId: string; add: string[]; remove: string[] };

export async function enqueueLabelFlip(tx: Tx, flip: LabelFlip): Promise<void> {
  await enqueue(tx, "fixloop.labels", flip, { queueName: `fixloop-labels:${flip.pullRequestId}`, maxAttempts: 5 });
}

/** Airlock's copy of a PR's labels after a flip: the others kept in order, the added one last. */
export function flippedLabels(labels: readonly string[], flip: { add: readonly string[]; remove: readonly string[] }): string[] {
  const drop = new Set([...flip.add, ...flip.remove]);
  return [...labels.filter((l) => !drop.has(l)), ...flip.add];
}

export async function flipLabelsOnForge(opts: {
  db: Db;
  forgeFor: (repository: { fullName: string; forge: string }) => Forge;
  flip: LabelFlip;
}): Promise<{ labels: string[] } | null> {
  const pr = await opts.db.pullRequest.findUnique({
    where: { id: opts.flip.pullRequestId },
    select: { number: true, repository: { select: { fullName: true, forge: true } } },
  });
  if (!pr) return null;
  const result = await opts.forgeFor(pr.repository).setLabels(pr.repository.fullName, pr.number, { add: opts.flip.add, remove: opts.flip.remove });
  // The forge's answer is the truth (a person may have labelled the PR meanwhile).
  await opts.db.pullRequest.update({ where: { id: opts.flip.pullRequestId }, data: { labels: result.labels } });
  return result;
}
