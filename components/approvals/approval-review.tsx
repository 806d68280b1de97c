"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { ProofSkeleton, ProofTree } from "@/components/policies/proof-tree";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { RelativeTime } from "@/components/ui/time";
import { useNow } from "@/components/ui/use-now";
import { ApprovalActions } from "./approval-actions";
import { Field, PresentedSections, targetLine } from "./presented-sections";
import { PushProtectionPanel } from "./push-protection";
import { statusTone } from "./approvals-queue";
import { useApprovalStream } from "./use-approval-stream";

// The review screen: everything the approver must see before a write-back leaves the sandbox,
// frozen when it was requested, then the decision controls. Live over SSE (polls while the
// stream reconnects and the request is open).

export function ApprovalReview({ approvalId }: { approvalId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const live = useApprovalStream();
  const q = useQuery({ ...trpc.approvals.byId.queryOptions({ approvalId }), refetchInterval: (query) => (live !== "live" && (query.state.data?.status === "pending" || query.state.data?.status === "approved") ? 2000 : false) });
  const a = q.data;
  const now = useNow();
  const proof = useQuery({ ...trpc.proofs.byId.queryOptions({ decisionId: a?.policyDecisionId ?? "" }), enabled: Boolean(a?.policyDecisionId) });
  const retry = useMutation(trpc.approvals.retryWriteBack.mutationOptions({ onSuccess: () => qc.invalidateQueries(), onError: (e) => toast.error(e.message) }));
  if (q.error) return <Alert>{q.error.message}</Alert>;
  if (!a) return <DetailPageSkeleton label="Loading the approval request" panels={3} />;
  // approvals.byId's output schema parsed the stored record (a record of another shape fails the call).
  const p = a.presented;
  const canDecide = a.viewerRole !== "viewer";
  const disabledReason =
    a.status !== "pending" ? `This request is ${a.status}` : !canDecide ? `Deciding needs the maintainer role; you are ${a.viewerRole}` : null;

  return (
    <article className="space-y-5">
      <header className="space-y-1">
        <p className="text-sm">
          <Link href="/approvals" className="text-indigo-600 hover:underline dark:text-indigo-400">
            Approvals
          </Link>{" "}
          / {a.id}
        </p>
        <h1 className="flex items-center gap-2 text-xl font-semibold">
          {a.action.replaceAll("_", " ")} on {a.run.repository.fullName} <Badge tone={statusTone(a.status)}>{a.status}</Badge>
        </h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Run{" "}
          <Link href={`/runs/${a.run.id}`} className="text-indigo-600 hover:underline dark:text-indigo-400">
            #{a.run.number} {a.run.title}
          </Link>{" "}
          · triggered by {a.run.actor}
          {a.run.triggerRule && ` · rule ${a.run.triggerRule.name}`} · {now !== null && a.expiresAt.getTime() <= now ? "expired" : "expires"} <RelativeTime date={a.expiresAt} />
          {a.decidedBy && ` · ${a.status} by ${a.decidedBy.email}`}
          {a.reason && ` · ${a.reason}`}
        </p>
        {a.exceptionApplies && <p className="text-sm text-amber-700 dark:text-amber-300">A repository exception covers {a.action.replaceAll("_", " ")} on this repository.</p>}
      </header>

      <Card as="section" padding="sm" aria-label="Requested action">
        <dl className="grid gap-3 sm:grid-cols-3">
          <Field label="Action">{a.action.replaceAll("_", " ")}</Field>
          <Field label="Target">
            <span className="font-mono text-xs">{targetLine(p, a)}</span>
          </Field>
          <Field label="Head SHA">
            <span className="font-mono text-xs" data-testid="head-sha">{a.targetHeadSha ?? "—"}</span>
            {a.targetHeadSha && <CopyButton value={a.targetHeadSha} what="head SHA" className="ml-0.5 align-middle" />}
          </Field>
        </dl>
        {a.status === "pending" && (
          <div className="mt-3">
            <ApprovalActions approvalId={a.id} artifactDigest={a.artifactDigest} headSha={a.targetHeadSha} disabledReason={disabledReason} approveRefusal={a.approveRefusal ?? a.viewerTwoPersonRefusal} />
            {a.viewerTwoPersonRefusal && (
              <Alert tone="warning" className="mt-2" data-testid="two-person-refusal">
                {a.viewerTwoPersonRefusal}
              </Alert>
            )}
          </div>
        )}
      </Card>

      {a.pushProtection && <PushProtectionPanel approvalId={a.id} protection={a.pushProtection} canOverride={a.viewerRole === "admin"} pending={a.status === "pending"} />}

      {a.writeBack && (
        <Card as="section" padding="sm" aria-label="Write-back" className="text-sm">
          <h2 className="mb-2 font-medium">
            Write-back <Badge tone={a.writeBack.outcome === "succeeded" ? "success" : a.writeBack.outcome === "failed" ? "danger" : "warning"}>{a.writeBack.outcome}</Badge>
          </h2>
          <dl className="grid gap-2 sm:grid-cols-3">
            <Field label="External reference">
              <span className="font-mono text-xs">{a.writeBack.externalRef ?? "—"}</span>
              {a.writeBack.externalRef && <CopyButton value={a.writeBack.externalRef} what="external reference" className="ml-0.5 align-middle" />}
            </Field>
            <Field label="Approved by">{a.writeBack.approvedBy ?? "exempt"}</Field>
            <Field label="Idempotency key"><span className="font-mono text-xs">{a.writeBack.idempotencyKey}</span></Field>
          </dl>
          {a.writeBack.error && <Alert role="status" className="mt-2">{a.writeBack.error}</Alert>}
          {a.writeBack.outcome === "failed" && canDecide && (
            <Button className="mt-2" size="sm" disabled={retry.isPending} onClick={() => retry.mutate({ writeBackId: a.writeBack?.id ?? "" })}>
              Retry write-back
            </Button>
          )}
        </Card>
      )}

      <section aria-label="Why approval" className="space-y-2">
        <h2 className="font-medium">Why this needs approval</h2>
        <p className="text-sm">{p.reason}</p>
        {proof.data ? (
          <ProofTree decision={proof.data.decision} />
        ) : a.policyDecisionId ? (
          <ProofSkeleton />
        ) : p.releaseGap ? (
          <p className="text-sm">The readiness check of release rule {p.releaseGap.ruleName} found this gap when the release was evaluated (the run&apos;s trigger proof lists each key). No rule exempts a gap: a person always accepts it or not.</p>
        ) : (
          <p className="text-sm">No policy rule decided this request, so it waits for a person: a write-back without a rule that exempts it always needs approval.</p>
        )}
      </section>

      <PresentedSections approval={a} presented={p} />
    </article>
  );
}
