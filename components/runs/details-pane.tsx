"use client";

import Link from "next/link";
import { useNow } from "@/components/ui/use-now";
import { Badge } from "@/components/ui/badge";
import { describeRunnerRef, formatCost, formatDuration } from "@/components/ui/format";
import { plainTerminalText } from "@/components/transcript/ansi";
import { Empty, Field, Names, Section } from "./section";
import type { RunDetailView } from "./types";
import { ApprovalActions } from "@/components/approvals/approval-actions";
import { LabelChangeSummary } from "@/components/approvals/label-change";
import { targetParts } from "@/components/approvals/target";
import { SandboxSection } from "./sandbox-section";
import { DiagnosisCommentButton } from "./diagnosis-comment-button";
import { RerunButton } from "./rerun-button";
import { ReviewButton } from "./review-button";
import { OpenPrButton } from "./open-pr-dialog";
import { PublishReleaseButton } from "./publish-release-dialog";

// The right pane: how the run executed and what it may touch. Attempts and
// their timing, runner pod/job, service accounts and native RBAC, the admission
// decision, the stack's tools, MCP servers, skills and subagents, Secret and
// ConfigMap grants (names only), approvals, artifacts and write-backs.

const ms = (a: Date | null | undefined, b: Date | number | null | undefined) => (a && b ? (typeof b === "number" ? b : b.getTime()) - a.getTime() : null);

export function DetailsPane({ run }: { run: RunDetailView }) {
  // Null until hydrated: a running attempt's clock is shown by the browser only.
  const now = useNow();
  const spec = run.stack.spec;
  const admission = run.admission;
  const identity = run.context.identity;
  const secretsGranted = admission?.secretsGranted ?? identity?.secretGrants ?? [];
  const configGranted = admission?.configMapsGranted ?? identity?.configMapGrants ?? [];
  return (
    <>
      <Section title="Attempts">
        {run.attempts.length === 0 ? (
          <Empty>No attempt yet.</Empty>
        ) : (
          <ol className="space-y-3">
            {run.attempts.map((a) => (
              <li key={a.id} className="text-sm">
                <div className="flex items-center justify-between gap-2">
                  <span className="font-medium">Attempt {a.number}</span>
                  <Badge tone={a.status === "succeeded" ? "success" : a.status === "running" || a.status === "starting" ? "progress" : a.status === "queued" ? "neutral" : "danger"}>
                    {a.status.replace("_", " ")}
                  </Badge>
                </div>
                <dl className="mt-1 space-y-0.5">
                  <Field label="Queue wait">{formatDuration(ms(a.queuedAt, a.startedAt ?? (a.status === "queued" ? now : null)))}</Field>
                  <Field label="Duration">{formatDuration(ms(a.startedAt, a.finishedAt ?? (a.startedAt && !a.finishedAt ? now : null)))}</Field>
                  <Field label="Pool">{a.runnerPool ? `${a.runnerPool.name} (${a.runnerPool.trustTier}, ${a.runnerPool.kind})` : "—"}</Field>
                  <Field label="Ran on">
                    <span className="break-all" title={a.runnerRef ?? undefined}>
                      {describeRunnerRef(a.runnerRef, a.runnerPool?.kind)}
                    </span>
                  </Field>
                  {a.adapterSessionId && (
                    <Field label="Session">
                      <span className="font-mono text-xs break-all">{a.adapterSessionId}</span>
                    </Field>
                  )}
                  {a.agentSessionId && (
                    <Field label="Agent session">
                      <span className="font-mono text-xs break-all">{a.agentSessionId}</span>
                    </Field>
                  )}
                  {a.exitReason && <Field label="Exit reason">{plainTerminalText(a.exitReason)}</Field>}
                  <Field label="Tokens">
                    {(a.inputTokens + a.outputTokens).toLocaleString("en")} · {formatCost(a.costUsd, a.costUnknown)}
                  </Field>
                </dl>
              </li>
            ))}
          </ol>
        )}
      </Section>

      <SandboxSection run={run} />

      <Section title="Service accounts">
        <dl className="space-y-1">
          <Field label="Runtime">{admission?.runtimeServiceAccount ?? run.attempts.at(-1)?.runtimeServiceAccount ?? "—"}</Field>
          <Field label="Runner">{admission?.runnerServiceAccount ?? run.attempts.at(-1)?.runnerServiceAccount ?? "—"}</Field>
          <Field label="Native RBAC">
            <Names names={identity?.nativeRoles ?? []} />
          </Field>
        </dl>
      </Section>

      <Section title="Admission">
        {admission ? (
          <div className="space-y-1.5 text-sm">
            <p>
              <Badge tone={admission.admitted ? "success" : "danger"}>{admission.admitted ? "admitted" : "refused"}</Badge>{" "}
              {admission.poolName ?? "no pool"} {admission.trustTier && <span className="text-zinc-600 dark:text-zinc-400">({admission.trustTier})</span>}
            </p>
            <p className="text-xs text-zinc-700 dark:text-zinc-300">{plainTerminalText(admission.summary)}</p>
          </div>
        ) : (
          <Empty>Not admitted yet.</Empty>
        )}
        {run.decisions.length > 0 && (
          <ul className="mt-2 space-y-1 border-t border-zinc-100 pt-2 text-xs dark:border-zinc-800">
            {run.decisions.map((d) => (
              <li key={d.id} className="break-words">
                {/* A long value (a pool or rule name) wraps inside the pane instead of running past it. */}
                <span className="font-mono break-all">
                  {d.property} = {JSON.stringify(d.value)}
                </span>{" "}
                <span className="text-zinc-600 dark:text-zinc-400">by {d.ruleName ?? "no rule (fail-closed)"}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title="Secret and ConfigMap grants">
        <dl className="space-y-1">
          <Field label="Secrets">
            <Names names={secretsGranted} />
          </Field>
          {admission && admission.secretsDenied.length > 0 && (
            <Field label="Denied">
              <ul className="space-y-0.5 text-xs">
                {admission.secretsDenied.map((d) => (
                  <li key={d.name}>
                    <code>{d.name}</code> <span className="text-zinc-600 dark:text-zinc-400">{d.reason}</span>
                  </li>
                ))}
              </ul>
            </Field>
          )}
          <Field label="ConfigMaps">
            <Names names={configGranted} />
          </Field>
        </dl>
        <p className="mt-1 text-[11px] text-zinc-600 dark:text-zinc-400">Names only: values never leave the server.</p>
      </Section>

      <Section title="Tools and actions">
        <Names names={spec?.tools ?? []} />
      </Section>

      <Section title="MCP servers">
        {spec && spec.mcpServers.length > 0 ? (
          <ul className="space-y-1.5 text-sm">
            {spec.mcpServers.map((m) => (
              <li key={m.name}>
                <span className="font-mono text-xs">{m.name}</span> <span className="text-xs text-zinc-600 dark:text-zinc-400">{m.transport}</span>
                {m.privileged && (
                  <Badge tone="warning" className="ml-1">
                    privileged
                  </Badge>
                )}
                {(m.secrets.length > 0 || m.configMaps.length > 0) && (
                  <div className="mt-0.5 text-xs">
                    <Names names={[...m.secrets, ...m.configMaps]} />
                  </div>
                )}
              </li>
            ))}
          </ul>
        ) : (
          <Empty>None.</Empty>
        )}
      </Section>

      <Section title="Skills">
        <Names names={spec?.skills ?? []} />
      </Section>

      <Section title="Subagents">
        {spec && spec.subagents.length > 0 ? (
          <ul className="space-y-1 text-sm">
            {spec.subagents.map((s) => (
              <li key={s.name}>
                <span className="font-mono text-xs">{s.name}</span> <span className="text-xs text-zinc-600 dark:text-zinc-400">{s.role}</span>
              </li>
            ))}
          </ul>
        ) : (
          <Empty>None.</Empty>
        )}
      </Section>

      <Section title="Approvals">
        {run.approvals.length === 0 ? (
          <Empty>None requested.</Empty>
        ) : (
          <ul className="space-y-2 text-sm">
            {run.approvals.map((a) => (
              <li key={a.id}>
                <div className="flex items-center justify-between gap-2">
                  <span>{a.action.replaceAll("_", " ")}</span>
                  <Badge tone={a.status === "pending" ? "warning" : a.status === "rejected" || a.status === "failed" ? "danger" : "neutral"}>{a.status}</Badge>
                </div>
                <p className="text-xs text-zinc-600 dark:text-zinc-400">
                  {targetParts(a).join(", ") || "no target"}
                  {a.decidedBy && ` · ${a.status} by ${a.decidedBy.name}`}
                  {a.reason && ` · ${plainTerminalText(a.reason)}`}
                </p>
                {a.action === "set_labels" && (
                  <p className="text-xs">
                    <LabelChangeSummary presented={a.presented} />
                  </p>
                )}
                {a.status === "pending" && (
                  <div className="mt-1">
                    <ApprovalActions size="sm" approvalId={a.id} artifactDigest={a.artifactDigest} headSha={a.targetHeadSha} disabledReason={run.controls.reject.reason} approveRefusal={run.controls.approve.reason ?? a.approveRefusal} detail={run.controls.approve.detail} />
                  </div>
                )}
                <Link href={`/approvals/${a.id}`} className="text-xs text-indigo-600 hover:underline dark:text-indigo-400">
                  Review
                </Link>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title="Artifacts">
        {run.artifacts.length === 0 ? (
          <Empty>None.</Empty>
        ) : (
          <ul className="space-y-2 text-sm">
            {run.artifacts.map((a) => (
              <li key={a.id}>
                <Link href={`/runs/${run.id}/artifacts/${a.id}`} className="text-indigo-600 hover:underline dark:text-indigo-400">
                  {a.name}
                </Link>{" "}
                <span className="text-xs text-zinc-600 dark:text-zinc-400">
                  {a.kind} · {a.sizeBytes.toLocaleString("en")} B
                </span>
                <p className="font-mono text-[11px] break-all text-zinc-600 dark:text-zinc-400">{a.digest}</p>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title="Write-backs">
        {run.taskKind === "diagnose" && run.pullRequest && (
          <div className="mb-2">
            <DiagnosisCommentButton runId={run.id} verdict={run.diagnosisComment} />
          </div>
        )}
        {run.pullRequest && (
          <div className="mb-2">
            <ReviewButton runId={run.id} verdict={run.review} />
          </div>
        )}
        {run.pipeline && (
          <div className="mb-2">
            <RerunButton runId={run.id} verdict={run.rerun} />
          </div>
        )}
        {run.openPr.shown && (
          <div className="mb-2">
            <OpenPrButton runId={run.id} verdict={run.openPr} />
          </div>
        )}
        {run.publishRelease.shown && (
          <div className="mb-2">
            <PublishReleaseButton runId={run.id} verdict={run.publishRelease} artifacts={run.artifacts} />
          </div>
        )}
        {run.writeBacks.length === 0 ? (
          <Empty>None yet. A write-back waits for an approval unless the change gate exempts it.</Empty>
        ) : (
          <ul className="space-y-1.5 text-sm">
            {run.writeBacks.map((w) => (
              <li key={w.id}>
                <div className="flex items-center justify-between gap-2">
                  <span>{w.kind.replaceAll("_", " ")}</span>
                  <Badge tone={w.outcome === "succeeded" ? "success" : w.outcome === "failed" ? "danger" : "warning"}>{w.outcome}</Badge>
                </div>
                <p className="text-xs break-all text-zinc-600 dark:text-zinc-400">
                  {w.approvedBy ? `approved by ${w.approvedBy}` : `exempt from approval: ${plainTerminalText(exceptionOf(w.target) ?? "a repository exception applied")}`}
                  {` · actor ${w.actor} · stack ${w.stackDigest.slice(0, 15)}… · context ${w.contextDigest.slice(0, 15)}… · prompt ${w.promptHash.slice(0, 15)}…`}
                  {w.artifactDigest && ` · artifact ${w.artifactDigest.slice(0, 15)}…`}
                  {w.externalRef && ` · ${plainTerminalText(w.externalRef)}`}
                  {w.error && ` · ${plainTerminalText(w.error)}`}
                </p>
              </li>
            ))}
          </ul>
        )}
        {run.rerunPipelines.length > 0 && (
          <ul className="mt-2 space-y-1 text-sm" aria-label="Check reruns">
            {run.rerunPipelines.map((p) => (
              <li key={p.id} className="flex items-center justify-between gap-2" data-testid="check-rerun">
                <span className="break-all">
                  check rerun {p.checkName} ({p.externalId}) at <span className="font-mono text-xs">{p.headSha.slice(0, 12)}</span>
                </span>
                <Badge tone={p.conclusion === "success" ? "success" : p.conclusion ? "danger" : "warning"}>{p.conclusion ?? p.status}</Badge>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}

/** The exception the change gate applied to an exempt write-back (stored on its target). */
function exceptionOf(target: unknown): string | null {
  const e = target && typeof target === "object" && "exception" in target ? (target as { exception?: unknown }).exception : null;
  return typeof e === "string" ? e : null;
}
