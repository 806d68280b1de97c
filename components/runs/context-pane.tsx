import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { formatDuration, shortSha } from "@/components/ui/format";
import { plainTerminalText } from "@/components/transcript/ansi";
import { safeUrl } from "@/components/transcript/safe-url";
import { TerminalText } from "@/components/transcript/terminal-text";
import { Empty, ExternalLink, Field, Names, Section } from "./section";
import type { RunDetailView } from "./types";

// The left pane: what the agent was given. PR and check context, the failed
// step, changed files and labels, the context labels of the bundle, the
// bounded log excerpt (numbered, each line linkable as #L<n>) and artifacts.

const bytes = (n: number | null) => (n === null ? "" : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);

export function ContextPane({ run }: { run: RunDetailView }) {
  const pr = run.pullRequest;
  const job = run.job;
  const ctx = run.context;
  const excerpt = job?.logExcerpt ? { name: [job.name, job.step].filter(Boolean).join(" › "), startLine: job.logExcerptStartLine, text: job.logExcerpt } : ctx.logExcerpts[0];
  const changedFiles = pr?.changedFiles.length ? pr.changedFiles : ctx.changedFiles;
  const labels = pr?.labels.length ? pr.labels : ctx.labels;
  const failingTests = job?.failingTests.length ? job.failingTests : (ctx.failure?.testNames ?? []);
  return (
    <>
      <Section title="Pull request and check">
        <dl className="space-y-1">
          {pr ? (
            <>
              <Field label="Pull request">
                <ExternalLink href={safeUrl(pr.url)}>
                  #{pr.number} {pr.title}
                </ExternalLink>
              </Field>
              <Field label="Author">{pr.author}</Field>
              <Field label="Branches">
                <span className="font-mono text-xs">
                  {pr.headRepoFullName ? `${pr.headRepoFullName}:` : ""}
                  {pr.headRef} → {pr.baseRef}
                </span>
                {pr.isFork && (
                  <Badge tone="warning" className="ml-1">
                    fork
                  </Badge>
                )}
              </Field>
            </>
          ) : (
            <Field label="Pull request">none</Field>
          )}
          {run.pipeline && (
            <>
              <Field label="Workflow">
                <ExternalLink href={safeUrl(run.pipeline.url)}>{run.pipeline.workflowName}</ExternalLink>
              </Field>
              <Field label="Check">
                {run.pipeline.checkName} <Badge tone={run.pipeline.conclusion === "failure" ? "danger" : "neutral"}>{run.pipeline.conclusion ?? run.pipeline.status}</Badge>
              </Field>
              <Field label="Head">
                <span className="font-mono text-xs">{shortSha(run.pipeline.headSha)}</span>
              </Field>
            </>
          )}
          {run.triggerRule && <Field label="Trigger rule">{run.triggerRule.name}</Field>}
        </dl>
      </Section>

      <Section title="Failed step">
        {job ? (
          <dl className="space-y-1">
            <Field label="Job">{job.name}</Field>
            <Field label="Step">{job.step ?? "—"}</Field>
            <Field label="Exit code">{job.exitCode ?? "—"}</Field>
            <Field label="Runner">
              {job.runnerPool ?? "—"}
              {job.image && <span className="block font-mono text-xs text-zinc-600 dark:text-zinc-400">{job.image}</span>}
            </Field>
            <Field label="Duration">{formatDuration(job.durationMs)}</Field>
            <Field label="Signature">
              <span className="font-mono text-xs break-all">{job.failureSignature ?? "—"}</span>
            </Field>
            {failingTests.length > 0 && (
              <Field label="Failing tests">
                <ul className="space-y-0.5 font-mono text-xs">
                  {failingTests.slice(0, 50).map((t) => (
                    <li key={t} className="break-all">
                      {plainTerminalText(t)}
                    </li>
                  ))}
                </ul>
              </Field>
            )}
          </dl>
        ) : (
          <Empty>No failed job is linked to this run.</Empty>
        )}
      </Section>

      <Section title="Changed files">
        {changedFiles.length > 0 ? (
          <ul className="max-h-48 space-y-0.5 overflow-y-auto font-mono text-xs">
            {changedFiles.slice(0, 500).map((f) => (
              <li key={f} className="break-all">
                {f}
              </li>
            ))}
          </ul>
        ) : (
          <Empty>None recorded.</Empty>
        )}
      </Section>

      <Section title="Labels">
        <Names names={labels} />
      </Section>

      <Section title="Context labels">
        {ctx.contextLabels.length > 0 ? (
          <ul className="space-y-1.5 text-sm">
            {ctx.contextLabels.map((l) => (
              <li key={l.label}>
                <code className="rounded bg-zinc-100 px-1 text-xs dark:bg-zinc-800">{l.label}</code>
                {l.bytes !== null && <span className="ml-1 text-xs text-zinc-600 dark:text-zinc-400">{bytes(l.bytes)}</span>}
                {l.provenance && <p className="text-xs text-zinc-600 dark:text-zinc-400">{plainTerminalText(l.provenance)}</p>}
              </li>
            ))}
          </ul>
        ) : (
          <Empty>None.</Empty>
        )}
        {ctx.redaction && <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">Redaction: {ctx.redaction}</p>}
      </Section>

      <Section title="Log excerpt">
        {excerpt ? (
          <>
            <p className="mb-1 text-xs text-zinc-600 dark:text-zinc-400">{excerpt.name}</p>
            <TerminalText text={excerpt.text} startLine={excerpt.startLine} anchorPrefix="L" label="Log excerpt" className="max-h-96 overflow-y-auto" />
          </>
        ) : (
          <Empty>No log excerpt.</Empty>
        )}
      </Section>

      <Section title="Artifacts">
        {run.artifacts.length === 0 && ctx.ciArtifacts.length === 0 ? (
          <Empty>None.</Empty>
        ) : (
          <ul className="space-y-1 text-sm">
            {run.artifacts.map((a) => (
              <li key={a.id}>
                <Link href={`/runs/${run.id}/artifacts/${a.id}`} className="text-indigo-600 hover:underline dark:text-indigo-400">
                  {a.name}
                </Link>{" "}
                <span className="text-xs text-zinc-600 dark:text-zinc-400">
                  {a.kind} · {bytes(a.sizeBytes)}
                </span>
              </li>
            ))}
            {ctx.ciArtifacts.map((a) => (
              <li key={`ci-${a.name}`}>
                <ExternalLink href={safeUrl(a.url)}>{a.name}</ExternalLink> <span className="text-xs text-zinc-600 dark:text-zinc-400">CI {a.type ?? "artifact"}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section title="Prompt">
        <details>
          <summary className="cursor-pointer text-sm text-zinc-700 dark:text-zinc-300">Show the assembled prompt</summary>
          <pre className="mt-2 max-h-96 overflow-auto rounded bg-zinc-100 p-2 font-mono text-xs whitespace-pre-wrap dark:bg-zinc-950">{plainTerminalText(run.prompt)}</pre>
        </details>
        <p className="mt-1 font-mono text-[11px] break-all text-zinc-600 dark:text-zinc-400">{run.promptHash}</p>
      </Section>
    </>
  );
}
