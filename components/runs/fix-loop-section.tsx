"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { ProofSkeleton, ProofTree } from "@/components/policies/proof-tree";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Empty, Field, Section } from "./section";

// The fix-forward loop of the run's branch: each rejection and the fix run it started, the
// attempts used against the bound, the attribution of each red check (with its proof), the
// escalation digest and, for a maintainer, "re-open for agents". Text is rendered as text.

const attributionTone = { ours: "danger", pre_existing: "neutral", unknown: "warning" } as const;
const attributionLabel: Record<string, string> = { ours: "ours", pre_existing: "pre-existing", unknown: "unknown" };

function Proof({ decisionId }: { decisionId: string }) {
  const trpc = useTRPC();
  const proof = useQuery(trpc.proofs.byId.queryOptions({ decisionId }));
  if (proof.error) return <Alert>{proof.error.message}</Alert>;
  return proof.data ? <ProofTree decision={proof.data.decision} /> : <ProofSkeleton />;
}

export function FixLoopSection({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const loop = useQuery({ ...trpc.fixLoops.byRun.queryOptions({ runId }), refetchInterval: 3000 });
  const [open, setOpen] = useState<string | null>(null);
  const reopen = useMutation(
    trpc.fixLoops.reopen.mutationOptions({
      onSuccess: async () => {
        toast.success("Re-opened for agents: the fix-run bound starts again");
        await qc.invalidateQueries();
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  const l = loop.data;
  if (!l) return null;
  const fixes = l.rounds.filter((r) => r.kind === "fix");
  return (
    <Section title="Fix-forward loop" id="fix-loop">
      <div data-testid="fix-loop" className="space-y-3">
        <dl className="space-y-1">
          <Field label="Branch">
            <span className="font-mono text-xs">{l.branch}</span>
          </Field>
          {l.pullRequest && (
            <Field label="Pull request">
              #{l.pullRequest.number} {l.pullRequest.title}
            </Field>
          )}
          <Field label="Fix runs">
            <span data-testid="fix-loop-attempts">
              {l.used} of {l.bound}
            </span>
          </Field>
        </dl>

        {l.escalatedAt ? (
          <div data-testid="fix-loop-escalation" className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-2 dark:border-amber-700 dark:bg-amber-950">
            <p className="text-sm">
              <Badge tone="warning">Escalated</Badge> to a person; no fix run starts until a maintainer re-opens it.
            </p>
            {l.escalationDigest && <pre className="max-h-72 overflow-auto text-xs whitespace-pre-wrap">{l.escalationDigest}</pre>}
            {l.pullRequest && l.labelFlip && (
              <p className="text-sm" data-testid="fix-loop-label-flip">
                Labels on #{l.pullRequest.number}: {l.pullRequest.labels.join(", ") || "none"}. Flip
                {l.labelFlip.change && ` (add ${l.labelFlip.change.add.join(", ") || "none"}; remove ${l.labelFlip.change.remove.join(", ") || "none"})`}: <Badge tone={l.labelFlip.status === "pending" ? "warning" : "neutral"}>{l.labelFlip.status}</Badge>{" "}
                <Link className="text-indigo-700 underline dark:text-indigo-400" href={`/approvals/${l.labelFlip.approvalId}`}>
                  Review
                </Link>
              </p>
            )}
            <Button size="sm" disabled={reopen.isPending} onClick={() => reopen.mutate({ repositoryId: l.repository.id, branch: l.branch })}>
              {reopen.isPending ? "Re-opening…" : "Re-open for agents"}
            </Button>
          </div>
        ) : l.resetAt ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">Re-opened for agents by {l.resetBy ?? "a maintainer"}.</p>
        ) : null}

        {l.deferred && (
          <div data-testid="fix-loop-deferred" className="space-y-1 rounded-md border border-zinc-300 p-2 text-sm dark:border-zinc-700">
            <p>
              <Badge tone="neutral">Deferred</Badge> Rejected by {l.deferred.by}
              {l.deferred.behind ? (
                <>
                  {" "}
                  while a run was live: waiting for run{" "}
                  <Link className="text-indigo-700 underline dark:text-indigo-400" href={`/runs/${l.deferred.behind.id}`}>
                    #{l.deferred.behind.number}
                  </Link>{" "}
                  to end.
                </>
              ) : (
                " while a run was live: waiting for it to end."
              )}
            </p>
            <blockquote className="border-l-2 border-zinc-300 pl-2 whitespace-pre-wrap dark:border-zinc-700">{l.deferred.text}</blockquote>
          </div>
        )}

        <div>
          <h3 className="mb-1 text-sm font-medium">Rounds</h3>
          {fixes.length === 0 && !l.rounds.some((r) => r.kind === "escalate") ? (
            <Empty>{l.deferred ? "No fix run yet." : "No rejection yet."}</Empty>
          ) : (
            <ol className="space-y-2" data-testid="fix-loop-rounds">
              {l.rounds.map((r) => (
                <li key={r.id} className="space-y-0.5 text-sm">
                  <div className="flex flex-wrap items-center gap-2">
                    <span className="font-medium">{r.kind === "fix" ? `Round ${fixes.indexOf(r) + 1}` : "Escalation"}</span>
                    <Badge tone={r.outcome === "failed" ? "danger" : r.outcome === "launched" ? "success" : "neutral"}>{r.outcome}</Badge>
                    {!r.counted && <Badge tone="neutral">before re-open</Badge>}
                  </div>
                  <p className="text-zinc-600 dark:text-zinc-400">Rejected by {r.rejectedBy}:</p>
                  <blockquote className="border-l-2 border-zinc-300 pl-2 whitespace-pre-wrap dark:border-zinc-700">{r.rejection}</blockquote>
                  {r.run && (
                    <p>
                      Fix run{" "}
                      <Link className="text-indigo-700 underline dark:text-indigo-400" href={`/runs/${r.run.id}`}>
                        #{r.run.number}
                      </Link>{" "}
                      ({r.run.status.replaceAll("_", " ")})
                    </p>
                  )}
                  {r.error && <p className="text-red-700 dark:text-red-400">Launch failed: {r.error}</p>}
                </li>
              ))}
            </ol>
          )}
        </div>

        <div>
          <h3 className="mb-1 text-sm font-medium">Red checks</h3>
          {l.attributions.length === 0 ? (
            <Empty>No red check attributed.</Empty>
          ) : (
            <ul className="space-y-2" data-testid="fix-loop-attributions">
              {l.attributions.map((a) => (
                <li key={a.decisionId} className="space-y-1 text-sm">
                  <div className="flex flex-wrap items-center gap-2">
                    <span className="font-mono text-xs">{a.check}</span>
                    <Badge tone={attributionTone[a.value as keyof typeof attributionTone] ?? "neutral"}>{attributionLabel[a.value] ?? a.value}</Badge>
                    <button type="button" className="text-xs text-indigo-700 underline dark:text-indigo-400" onClick={() => setOpen(open === a.decisionId ? null : a.decisionId)}>
                      {open === a.decisionId ? "Hide proof" : "Show proof"}
                    </button>
                  </div>
                  {open === a.decisionId && <Proof decisionId={a.decisionId} />}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </Section>
  );
}
