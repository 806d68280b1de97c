"use client";

import { Badge } from "@/components/ui/badge";
import { describeLimit, formatMb } from "@/server/execution/sandbox/schemas";
import { Empty, Field, Names, Section } from "./section";
import type { RunDetailView } from "./types";

// The right pane's sandbox: for the latest attempt that started one, what it enforced (kind,
// network mode and allowed hosts, limits, the user it ran as), the connections it refused, and
// the limit that ended it. The scripted demo agent runs in-process: it has no process to contain.

type Attempt = RunDetailView["attempts"][number];

export function SandboxSection({ run }: { run: RunDetailView }) {
  const scripted = run.stack.spec?.adapter.kind === "scripted";
  const attempt = [...run.attempts].reverse().find((a: Attempt) => a.sandbox?.started) ?? null;
  const view = attempt?.sandbox ?? null;
  const started = view?.started ?? null;
  return (
    <Section title="Sandbox">
      {scripted ? (
        <Empty>Scripted demo agent: no process (it replays a recording in the worker; nothing runs in the workspace).</Empty>
      ) : !started ? (
        <Empty>No attempt has started a process yet.</Empty>
      ) : (
        <div className="space-y-2">
          <dl className="space-y-1">
            <Field label="Kind">
              {started.kind === "none" ? (
                <Badge tone="danger">no sandbox</Badge>
              ) : (
                <Badge tone="success">{started.kind === "bubblewrap" ? "bubblewrap" : "Kubernetes Job"}</Badge>
              )}{" "}
              <span className="text-xs text-zinc-600 dark:text-zinc-400">attempt {attempt?.number}</span>
            </Field>
            {started.unsandboxedReason && <Field label="Why">{started.unsandboxedReason}</Field>}
            {started.user && <Field label="Runs as">{started.user}</Field>}
            <Field label="Network">
              <span className="font-mono text-xs">{started.network.mode}</span>
              <span className="text-xs text-zinc-600 dark:text-zinc-400">
                {started.network.mode === "none" ? " (its own loopback only)" : started.network.mode === "open" ? " (any host but this machine)" : " (only through the egress proxy)"}
              </span>
            </Field>
            {started.modelGateway && (
              <Field label="Model API">
                <span className="font-mono text-xs">{started.modelGateway}</span>
                <span className="text-xs text-zinc-600 dark:text-zinc-400">
                  {" "}
                  through Airlock&apos;s gateway: the key stays outside the sandbox
                  {view?.metered
                    ? `; ${view.metered.calls} ${view.metered.calls === 1 ? "call" : "calls"} metered, ${view.metered.models.reduce((n, m) => n + m.inputTokens + m.cacheReadTokens + m.cacheWriteTokens, 0).toLocaleString("en")} tokens in, ${view.metered.models.reduce((n, m) => n + m.outputTokens, 0).toLocaleString("en")} out`
                    : ""}
                </span>
              </Field>
            )}
            {started.network.mode === "restricted" && (
              <Field label="Allowed hosts">
                <Names names={started.network.allowedHosts} />
              </Field>
            )}
            {started.limits && (
              <Field label="Limits">
                <span className="text-xs">
                  {formatMb(started.limits.memoryMb)} memory · {started.limits.processes} processes · {started.limits.cpuSeconds} s CPU · {formatMb(started.limits.diskMb)} disk
                </span>
              </Field>
            )}
          </dl>
          {view?.ended?.limit && (
            <p role="alert" className="rounded bg-red-50 px-2 py-1 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
              Ended by its {describeLimit(view.ended.limit, started.limits ?? { memoryMb: 0, processes: 0, cpuSeconds: 0, diskMb: 0 })}: {view.ended.reason}
            </p>
          )}
          {view?.ended && !view.ended.limit && (
            <p className="text-xs text-zinc-600 dark:text-zinc-400">
              Peak {view.ended.peakMemoryMb} MiB memory, {view.ended.peakProcesses} processes, {view.ended.cpuSeconds} s CPU.
            </p>
          )}
          <div>
            <h3 className="text-xs font-medium text-zinc-700 dark:text-zinc-300">Blocked connections ({view?.blockedTotal ?? 0})</h3>
            {view && view.blocked.length > 0 ? (
              <ul className="mt-1 space-y-0.5 text-xs">
                {view.blocked.map((b, i) => (
                  <li key={`${b.at}-${i}`}>
                    <code>
                      {b.host}:{b.port}
                    </code>{" "}
                    <span className="text-zinc-600 dark:text-zinc-400">
                      {b.reason} · <time dateTime={b.at}>{new Date(b.at).toISOString().slice(11, 19)}</time>
                    </span>
                  </li>
                ))}
                {view.blockedTotal > view.blocked.length && <li className="text-zinc-600 dark:text-zinc-400">and {view.blockedTotal - view.blocked.length} more</li>}
              </ul>
            ) : (
              <Empty>None.</Empty>
            )}
          </div>
        </div>
      )}
    </Section>
  );
}
