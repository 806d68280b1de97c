"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { DetailPageSkeleton } from "@/components/layout/page-skeletons";
import { ProofSkeleton, ProofTree } from "@/components/policies/proof-tree";
import { useTRPC } from "@/components/providers/trpc";
import { DiffView } from "@/components/transcript/diff-view";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { RelativeTime } from "@/components/ui/time";
import { useNow } from "@/components/ui/use-now";
import type { Presented } from "@/server/domain/approvals/presented";
import { ApprovalActions } from "./approval-actions";
import { LabelChangeView } from "./label-change";
import { PushProtectionPanel } from "./push-protection";
import { statusTone } from "./approvals-queue";
import { useApprovalStream } from "./use-approval-stream";

// The review screen: everything the approver must see before a write-back leaves the sandbox,
// frozen when it was requested, then the decision controls. Live over SSE (polls while the
// stream reconnects and the request is open).

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="text-sm break-words">{children}</dd>
    </div>
  );
}

const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");

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
  const p = a.presented as unknown as Presented;
  const canDecide = a.viewerRole !== "viewer";
  const blocked = a.pushProtection && !a.pushProtection.override ? "Push protection: the patch contains secrets; an admin must override first" : null;
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
            <span className="font-mono text-xs">{[p.target?.repository, a.targetBranch && `branch ${a.targetBranch}`, a.targetPrNumber && `PR #${a.targetPrNumber}`, a.targetCheck && `check ${a.targetCheck}`].filter(Boolean).join(" · ")}</span>
          </Field>
          <Field label="Head SHA">
            <span className="font-mono text-xs" data-testid="head-sha">{a.targetHeadSha ?? "—"}</span>
            {a.targetHeadSha && <CopyButton value={a.targetHeadSha} what="head SHA" className="ml-0.5 align-middle" />}
          </Field>
        </dl>
        {a.status === "pending" && (
          <div className="mt-3">
            <ApprovalActions approvalId={a.id} artifactDigest={a.artifactDigest} headSha={a.targetHeadSha} disabledReason={disabledReason} approveRefusal={blocked ?? a.viewerTwoPersonRefusal} />
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
        {proof.data ? <ProofTree decision={proof.data.decision} /> : a.policyDecisionId ? <ProofSkeleton /> : <p className="text-sm">No stored decision: the gate failed closed.</p>}
      </section>

      {a.action === "set_labels" ? (
        <section aria-label="Label change" className="space-y-2">
          <h2 className="font-medium">Label change</h2>
          <LabelChangeView presented={a.presented} fallbackPrNumber={a.targetPrNumber} />
        </section>
      ) : (
        <section aria-label="Artifact" className="space-y-2">
          <h2 className="font-medium">Artifact</h2>
          <p className="font-mono text-xs break-all">
            <span data-testid="artifact-digest">
              {a.artifact?.name} {a.artifactDigest}
            </span>
            {a.artifactDigest && <CopyButton value={a.artifactDigest} what="artifact digest" className="ml-0.5 align-middle" />}
          </p>
          {a.artifact?.content ? <DiffView patch={a.artifact.content} /> : p.message ? <pre className="text-sm whitespace-pre-wrap">{p.message}</pre> : <p className="text-sm">No artifact.</p>}
        </section>
      )}

      <Card as="section" padding="sm" aria-label="Agent">
        <dl className="grid gap-3 sm:grid-cols-2">
          <Field label="Stack">{`${p.stack?.name ?? "?"} v${p.stack?.version ?? "?"} · ${p.stack?.model ?? "?"} · ${p.stack?.adapter ?? "?"}`}</Field>
          <Field label="Stack digest"><span className="font-mono text-xs">{p.stack?.digest}</span></Field>
          <Field label="Tools">{list(p.stack?.tools ?? [])}</Field>
          <Field label="MCP servers">{list((p.stack?.mcpServers ?? []).map((m) => `${m.name}${m.privileged ? " (privileged)" : ""}`))}</Field>
          <Field label="Skills">{list(p.stack?.skills ?? [])}</Field>
          <Field label="Subagents">{list((p.stack?.subagents ?? []).map((s) => `${s.name} (${s.role})`))}</Field>
          <Field label="Runner pool">{p.runnerPool ? `${p.runnerPool.name} (${p.runnerPool.trustTier}, ${p.runnerPool.kind})` : "not admitted"}</Field>
          <Field label="Runtime ServiceAccount">{p.runtimeServiceAccount ?? "—"}</Field>
          <Field label="Runner ServiceAccount">{p.runnerServiceAccount ?? "—"}</Field>
          <Field label="Secrets">{`granted: ${list(p.secrets?.granted ?? [])}; denied: ${list((p.secrets?.denied ?? []).map((d) => `${d.name} (${d.reason})`))}`}</Field>
          <Field label="ConfigMaps">{`granted: ${list(p.configMaps?.granted ?? [])}; denied: ${list((p.configMaps?.denied ?? []).map((d) => `${d.name} (${d.reason})`))}`}</Field>
          <Field label="Context labels">{list(p.contextLabels ?? [])}</Field>
        </dl>
        <h3 className="mt-3 text-xs font-medium text-zinc-600 dark:text-zinc-400">Assembled prompt ({p.promptHash})</h3>
        <pre className="mt-1 max-h-80 overflow-auto rounded bg-zinc-50 p-2 text-xs whitespace-pre-wrap dark:bg-zinc-950">{p.prompt}</pre>
      </Card>
    </article>
  );
}
