"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState } from "react";
import { useWatch } from "react-hook-form";
import { inputClass } from "@/components/forms/fields";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Alert } from "@/components/ui/alert";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { formatAbsolute, formatRelative, shortSha, taskKindLabel } from "@/components/ui/format";
import type { StackPreview } from "@/server/domain/evaluation/stack-preview";
import { zStackInput, type PreviewSource, type StackFormValues } from "@/server/domain/stacks/schemas";

// The live preview: the prompt and the resolved tools, MCP servers, skills and subagents a run of
// the form's (unsaved) stack would get for a recent failure of a repository, assembled on the
// server by the function the trigger path uses. It follows the form a moment after typing stops.

const TASK_KINDS = ["diagnose", "repair", "triage"] as const;
const sourceKey = (s: PreviewSource) => (s.kind === "delivery" ? `delivery:${s.deliveryId}` : `job:${s.jobId}`);

export function StackPreview({ stackId }: { stackId: string | null }) {
  const trpc = useTRPC();
  const ids = { repo: useId(), source: useId(), task: useId() };
  const repos = useQuery(trpc.repositories.mine.queryOptions());
  const [repositoryId, setRepositoryId] = useState<string>("");
  const repo = repositoryId || repos.data?.[0]?.id || "";
  const sources = useQuery({ ...trpc.stacks.previewSources.queryOptions({ repositoryId: repo }), enabled: repo !== "" });
  const usable = useMemo(() => (sources.data ?? []).filter((s) => s.problem === null), [sources.data]);
  const [picked, setPicked] = useState<string>("");
  const source = usable.find((s) => sourceKey(s.ref) === picked)?.ref ?? usable[0]?.ref ?? null;
  const [taskKind, setTaskKind] = useState<(typeof TASK_KINDS)[number]>("diagnose");

  const values = useWatch<StackFormValues>() as StackFormValues;
  const parsed = zStackInput.safeParse(values);
  const payload = parsed.success && source ? JSON.stringify({ repositoryId: repo, stackId, name: parsed.data.name, spec: parsed.data.spec, source, taskKind }) : null;
  const preview = useMutation(trpc.stacks.preview.mutationOptions());
  const { mutate } = preview;
  useEffect(() => {
    if (payload === null) return;
    const t = setTimeout(() => mutate(JSON.parse(payload)), 600);
    return () => clearTimeout(t);
  }, [payload, mutate]);

  const data = preview.data;
  return (
    <Card as="section" aria-label="Preview" className="space-y-3">
      <div>
        <h2 className="text-sm font-semibold">Preview</h2>
        <p className="text-xs text-zinc-500">What a run of this stack gets for a recent failure, exactly as the trigger path assembles it.</p>
      </div>
      <div className="grid gap-2">
        <label htmlFor={ids.repo} className="text-xs font-medium">Repository</label>
        <select id={ids.repo} className={inputClass} value={repo} onChange={(e) => setRepositoryId(e.target.value)}>
          {(repos.data ?? []).map((r) => (
            <option key={r.id} value={r.id}>{r.fullName}</option>
          ))}
        </select>
        <label htmlFor={ids.source} className="text-xs font-medium">Recent failure</label>
        <select id={ids.source} className={inputClass} value={source ? sourceKey(source) : ""} onChange={(e) => setPicked(e.target.value)} disabled={usable.length === 0} aria-busy={sources.isPending || undefined}>
          {usable.length === 0 && <option value="">{sources.isPending ? "…" : "No recent failures"}</option>}
          {usable.map((s) => (
            <option key={sourceKey(s.ref)} value={sourceKey(s.ref)} title={formatAbsolute(s.at)}>
              {s.summary ? `${s.summary.workflow ?? "?"} / ${s.summary.job ?? "?"} at ${shortSha(s.summary.headSha)}${s.summary.pullRequest ? ` (#${s.summary.pullRequest})` : ""}` : s.label} · {formatRelative(s.at)}
            </option>
          ))}
        </select>
        <label htmlFor={ids.task} className="text-xs font-medium">Task kind (when no rule of this stack matches)</label>
        <select id={ids.task} className={inputClass} value={taskKind} onChange={(e) => setTaskKind(e.target.value as (typeof TASK_KINDS)[number])}>
          {TASK_KINDS.map((k) => (
            <option key={k} value={k}>{taskKindLabel[k]}</option>
          ))}
        </select>
      </div>
      {!parsed.success && <Alert role="status" tone="warning" className="text-xs">Fix the errors in the form to update the preview.</Alert>}
      {preview.error && <Alert>{preview.error.message}</Alert>}
      {preview.isPending && <p className="text-xs text-zinc-500" aria-live="polite">Assembling…</p>}
      {data && <PreviewResult data={data} />}
    </Card>
  );
}

type Preview = StackPreview;

function List({ title, items }: { title: string; items: readonly string[] }) {
  return (
    <div>
      <h4 className="text-xs font-medium text-zinc-500">{title}</h4>
      {items.length === 0 ? <p className="text-xs text-zinc-500">none</p> : <p className="font-mono text-xs break-words">{items.join(", ")}</p>}
    </div>
  );
}

function PreviewResult({ data }: { data: Preview }) {
  const { stack } = data;
  return (
    <div className="space-y-3" data-testid="stack-preview">
      <p className="text-xs">
        {data.candidate.hypothetical ? "No rule of this stack matches this failure: shown as a hypothetical rule would start it." : `Started by rule ${data.candidate.ruleName}.`}{" "}
        <Badge tone="neutral">{taskKindLabel[data.candidate.taskKind]}</Badge> <Badge tone={data.candidate.action === "auto_run" ? "warning" : "info"}>{data.candidate.action === "auto_run" ? "auto-run" : "suggestion"}</Badge>{" "}
        <Badge tone={stack.saved ? "success" : "warning"}>{stack.saved ? `v${stack.version}` : `v${stack.version} after saving`}</Badge>
      </p>
      {data.candidate.unmatched.length > 0 && (
        <ul aria-label="Why this stack's rules did not match" className="list-disc pl-5 text-xs text-zinc-600 dark:text-zinc-400">
          {data.candidate.unmatched.map((u) => (
            <li key={u.ruleName}>
              <span className="font-mono">{u.ruleName}</span>: {u.reason}
            </li>
          ))}
        </ul>
      )}
      {data.source.fromJobRow && <p className="text-xs text-zinc-500">From a failed job with no stored delivery: the delivery id and CI actor are those its CI would send.</p>}
      <div>
        <h3 className="mb-1 text-xs font-semibold">Assembled prompt</h3>
        <pre aria-label="Assembled prompt" tabIndex={0} className="max-h-96 overflow-auto rounded-md border border-zinc-200 bg-zinc-50 p-2 font-mono text-xs leading-5 whitespace-pre-wrap dark:border-zinc-800 dark:bg-zinc-950">
          {data.prompt}
        </pre>
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 font-mono text-[11px] text-zinc-500">
        <dt>stack</dt>
        <dd className="truncate" title={stack.digest}>{stack.digest}</dd>
        <dt>context</dt>
        <dd className="truncate" title={data.contextDigest}>{data.contextDigest}</dd>
        <dt>prompt</dt>
        <dd className="truncate" title={data.promptHash}>{data.promptHash}</dd>
      </dl>
      <div className="space-y-2 rounded-md border border-zinc-200 p-2 dark:border-zinc-800" aria-label="Resolved stack">
        <h3 className="text-xs font-semibold">Resolved for the run</h3>
        <p className="text-xs">
          <span className="font-mono">{stack.model}</span> ·{" "}
          {stack.adapter.kind === "command" ? (
            <span className="inline-flex items-center gap-0.5">
              <span className="font-mono">{stack.adapter.command.join(" ")}</span>
              <CopyButton value={stack.adapter.command.join(" ")} what="command" />
            </span>
          ) : stack.adapter.kind === "claude-code" ? (
            <Badge>claude-code</Badge>
          ) : (
            <Badge tone="info">scripted {stack.adapter.scenario} (demo)</Badge>
          )}
        </p>
        {stack.launch && (
          <div aria-label="Claude Code launch">
            <h4 className="text-xs font-medium text-zinc-500">What the agent runs with (the prompt on stdin; secrets by name)</h4>
            <pre tabIndex={0} className="max-h-64 overflow-auto rounded-md border border-zinc-200 bg-zinc-50 p-2 font-mono text-[11px] whitespace-pre-wrap dark:border-zinc-800 dark:bg-zinc-950">
              {stack.launch.argv.map((a) => JSON.stringify(a)).join(" ")}
            </pre>
            <p className="text-xs">Environment: <span className="font-mono">{stack.launch.env.map((e) => `${e.name} (${e.from})`).join(", ") || "none granted"}</span></p>
            {stack.launch.files.map((f) => (
              <details key={f.name} className="text-xs">
                <summary className="cursor-pointer font-mono">{f.name}</summary>
                <pre className="overflow-auto rounded-md bg-zinc-50 p-2 font-mono text-[11px] dark:bg-zinc-950">{f.content}</pre>
              </details>
            ))}
            {stack.launch.withheld.length > 0 && <List title="Withheld (not granted)" items={stack.launch.withheld} />}
          </div>
        )}
        <List title={`Tools (${stack.toolProfile})`} items={stack.tools} />
        <div>
          <h4 className="text-xs font-medium text-zinc-500">MCP servers</h4>
          {stack.mcpServers.length === 0 ? <p className="text-xs text-zinc-500">none</p> : (
            <ul className="space-y-0.5 text-xs">
              {stack.mcpServers.map((s) => (
                <li key={s.name} className="font-mono break-all">
                  {s.name} ({s.transport}) {s.target}
                  {s.privileged && <Badge tone="warning" className="ml-1">privileged</Badge>}
                  {s.required === false ? (
                    <Badge tone="neutral" className="ml-1" title="Checked before each launch; if it fails, the run goes on without it">optional</Badge>
                  ) : (
                    <Badge tone="info" className="ml-1" title="Checked before each launch; if it fails, the launch is refused">required</Badge>
                  )}
                  {(s.secrets ?? []).length + (s.configMaps ?? []).length > 0 && <span className="text-zinc-500"> · needs {[...(s.secrets ?? []), ...(s.configMaps ?? [])].join(", ")}</span>}
                </li>
              ))}
            </ul>
          )}
        </div>
        <List title="Skills" items={stack.skills} />
        <div>
          <h4 className="text-xs font-medium text-zinc-500">Subagents</h4>
          {stack.subagents.length === 0 ? <p className="text-xs text-zinc-500">none</p> : (
            <ul className="space-y-0.5 text-xs">
              {stack.subagents.map((s) => (
                <li key={s.name}>
                  <span className="font-mono">{s.name}</span>: {s.role} <span className="font-mono text-zinc-500">[{(s.tools ?? []).join(", ")}]</span>
                </li>
              ))}
            </ul>
          )}
        </div>
        <List title="Secret grants it would request" items={data.identity.secretGrants.map((g) => `${g.secretName}${g.privileged ? " (privileged)" : ""}`)} />
        <List title="ConfigMap grants" items={data.identity.configGrants.map((g) => g.configMapName)} />
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Write-back: {data.policy.writeBackMode.replaceAll("_", " ")} · network {data.policy.network} · secrets {data.policy.secrets} · bot comments {data.policy.botCommentsAllowed ? "allowed" : "not allowed"}
        </p>
        <List title="Context labels" items={data.contextLabels} />
      </div>
    </div>
  );
}
