import Link from "next/link";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { formatCost, shortSha, taskKindLabel } from "@/components/ui/format";
import { safeUrl } from "@/components/transcript/safe-url";
import { ManualDispatchButton } from "./manual-dispatch-dialog";
import { OriginBadge } from "./origin-badge";
import { ExternalLink } from "./section";
import { RunStatusBadge } from "./status-badge";
import type { RunDetailView } from "./types";

// The run's identity at a glance: where it came from, what ran it, with which
// identities, and where its approvals stand.

function Item({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-[11px] font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">{label}</dt>
      <dd className="truncate text-sm" title={typeof children === "string" ? children : undefined}>
        {children}
      </dd>
    </div>
  );
}

export function approvalSummary(approvals: RunDetailView["approvals"]): string {
  if (approvals.length === 0) return "none requested";
  const counts = new Map<string, number>();
  for (const a of approvals) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(" · ");
}

function SourceObject({ run }: { run: RunDetailView }) {
  if (run.pullRequest) {
    return (
      <ExternalLink href={safeUrl(run.pullRequest.url)}>
        PR #{run.pullRequest.number} {run.pullRequest.title}
      </ExternalLink>
    );
  }
  if (run.pipeline) {
    return (
      <ExternalLink href={safeUrl(run.pipeline.url)}>
        {run.pipeline.workflowName} run {run.pipeline.externalId}
      </ExternalLink>
    );
  }
  const href = safeUrl(run.context.sourceUrl);
  return <ExternalLink href={href}>{run.context.sourceDetail ?? run.source.replaceAll("_", " ")}</ExternalLink>;
}

export function RunHeader({ run }: { run: RunDetailView }) {
  const lastAttempt = run.attempts.at(-1);
  const pool = run.runnerPool?.name ?? run.admission?.poolName ?? lastAttempt?.runnerPool?.name ?? null;
  const runtimeSa = run.admission?.runtimeServiceAccount ?? lastAttempt?.runtimeServiceAccount ?? run.runnerPool?.runtimeServiceAccount.name ?? null;
  const runnerSa = run.admission?.runnerServiceAccount ?? lastAttempt?.runnerServiceAccount ?? run.runnerPool?.runnerServiceAccount.name ?? null;
  const pending = run.approvals.filter((a) => a.status === "pending").length;
  // An admin let this trusted pool run without a sandbox, and an attempt did: never quietly.
  const unsandboxed = run.attempts.findLast((a) => a.sandbox?.started?.kind === "none") ?? null;
  return (
    <header className="space-y-2">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-600 dark:text-zinc-400">
        <Link href="/runs" className="hover:underline">
          Runs
        </Link>{" "}
        / {run.repository.fullName}
      </nav>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="min-w-0 text-xl font-semibold">
          <span className="mr-2 font-mono text-zinc-500 dark:text-zinc-400">#{run.number}</span>
          {run.title}
        </h1>
        <span data-testid="run-status">
          <RunStatusBadge status={run.status} />
        </span>
        <CopyButton value={() => new URL(`/runs/${run.id}`, window.location.origin).href} what="link to this run" />
        <OriginBadge run={run} />
        {run.pullRequest && (
          // Another run on the same pull request: the dialog of /runs, preset with this PR.
          <ManualDispatchButton repositories={[{ id: run.repository.id, fullName: run.repository.fullName, role: run.viewerRole }]} repositoryId={run.repository.id} pullRequestNumber={run.pullRequest.number} />
        )}
        {run.stack.spec?.adapter.kind === "scripted" && <Badge tone="info">scripted demo adapter</Badge>}
        {run.parentRun && (
          <Link href={`/runs/${run.parentRun.id}`} className="text-sm text-indigo-600 hover:underline dark:text-indigo-400">
            ↰ from #{run.parentRun.number}
          </Link>
        )}
      </div>
      <Card as="dl" padding="sm" className="grid grid-cols-2 gap-x-4 gap-y-1.5 sm:grid-cols-3 lg:grid-cols-6">
        <Item label="Repository">{run.repository.fullName}</Item>
        <Item label="Source">
          <SourceObject run={run} />
          {run.context.deliveryId && (
            <Link href={`/deliveries?delivery=${encodeURIComponent(run.context.deliveryId)}`} className="ml-2 text-xs text-indigo-600 hover:underline dark:text-indigo-400">
              delivery
            </Link>
          )}
        </Item>
        <Item label="Task">{`${taskKindLabel[run.taskKind] ?? run.taskKind} · ${run.source.replaceAll("_", " ")}`}</Item>
        <Item label="Agent stack">
          {run.stack.name ?? "—"} v{run.stack.version ?? run.stackVersion ?? "?"}
          {run.stack.spec && <span className="text-zinc-600 dark:text-zinc-400"> · {run.stack.spec.model}</span>}
        </Item>
        <Item label="Runner pool">{pool ?? "not selected yet"}</Item>
        <Item label="Branch @ SHA">
          <span className="inline-flex items-center gap-0.5 font-mono text-xs">
            {run.headBranch ?? "—"} @ {shortSha(run.headSha)}
            {run.headSha && <CopyButton value={run.headSha} what="head SHA" />}
          </span>
        </Item>
        <Item label="Runtime SA">{runtimeSa ?? "—"}</Item>
        <Item label="Runner SA">{runnerSa ?? "—"}</Item>
        <Item label="Check">
          {run.pipeline ? (
            <ExternalLink href={safeUrl(run.pipeline.url)}>
              {run.pipeline.checkName} · {run.pipeline.conclusion ?? run.pipeline.status}
            </ExternalLink>
          ) : (
            "—"
          )}
        </Item>
        <Item label="Approvals">
          <span className={pending > 0 ? "font-medium text-amber-800 dark:text-amber-300" : undefined}>{approvalSummary(run.approvals)}</span>
        </Item>
        <Item label="Actor">{run.actor}</Item>
        <Item label="Cost">
          {formatCost(run.costUsd, run.costUnknown)} · {(run.inputTokens + run.outputTokens).toLocaleString("en")} tokens
        </Item>
      </Card>
      {unsandboxed && (
        <Alert variant="banner">
          Attempt {unsandboxed.number} ran without a sandbox: {unsandboxed.sandbox?.started?.unsandboxedReason ?? "an admin allowed its pool to run unsandboxed"}.
        </Alert>
      )}
    </header>
  );
}
