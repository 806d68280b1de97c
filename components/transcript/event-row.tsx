"use client";

import Link from "next/link";
import { memo } from "react";
import { targetParts } from "@/components/approvals/target";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { formatDuration, formatUsd } from "@/components/ui/format";
import { ClockTime } from "@/components/ui/time";
import { plainTerminalText } from "./ansi";
import { payloadOf, toolDuration, type EventRow } from "./model";
import { SafeMarkdown } from "./safe-markdown";
import { safeUrl } from "./safe-url";
import { splitHighlights } from "./search";
import type { TEvent } from "./store";
import { TerminalLine, TerminalText } from "./terminal-text";

// One transcript row. Every value shown comes from an untrusted payload: text
// goes in as React text, Markdown through SafeMarkdown, terminal output
// through TerminalText, and links only to Airlock's own pages.

// Strings from the payload, with terminal sequences and control characters removed.
const s = (v: unknown) => (typeof v === "string" ? plainTerminalText(v) : "");
/** The raw string, for terminal output rendered by TerminalText (which keeps colours). */
const raw = (v: unknown) => (typeof v === "string" ? v : "");
const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const words = (v: string) => v.replaceAll("_", " ");
const clip = (v: string, max: number) => (v.length > max ? `${v.slice(0, max)}…` : v);

/** Pretty JSON for display, bounded. */
export function jsonPreview(value: unknown, max = 8_000): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? "null";
  } catch {
    text = String(value);
  }
  // JSON escapes C0 controls but not DEL and C1 (8-bit CSI/OSC): escape those too.
  text = text.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return text.length > max ? `${text.slice(0, max)}\n… (${(text.length - max).toLocaleString("en")} more characters)` : text;
}

function inputSummary(input: unknown): string {
  const p = payloadOf(input);
  for (const key of ["command", "file_path", "path", "pattern", "query", "url", "description"]) {
    if (typeof p[key] === "string") return plainTerminalText(p[key]);
  }
  return plainTerminalText(jsonPreview(input, 400).replace(/\s+/g, " "));
}

function Hl({ text, query }: { text: string; query?: string }) {
  if (!query) return <>{text}</>;
  return (
    <>
      {splitHighlights(text, query).map((h, i) => (h.match ? <mark key={i} className="rounded-sm bg-yellow-300 text-zinc-900">{h.text}</mark> : h.text))}
    </>
  );
}

export type EventRowProps = {
  row: EventRow;
  runId: string;
  expanded: boolean;
  collapsed: boolean;
  selected: boolean;
  match: "none" | "match" | "current";
  query?: string;
  onToggle: (seq: number) => void;
  onToggleSubagent: (id: string) => void;
};

// Rows are rebuilt on every batch of live events; a row re-renders only when what it shows changed.
const sameRow = (a: EventRowProps, b: EventRowProps) =>
  a.row.event === b.row.event &&
  a.row.result === b.row.result &&
  a.row.completion === b.row.completion &&
  a.row.childCount === b.row.childCount &&
  a.row.depth === b.row.depth &&
  a.runId === b.runId &&
  a.expanded === b.expanded &&
  a.collapsed === b.collapsed &&
  a.selected === b.selected &&
  a.match === b.match &&
  a.query === b.query &&
  a.onToggle === b.onToggle &&
  a.onToggleSubagent === b.onToggleSubagent;

export const EventRowView = memo(function EventRowView(props: EventRowProps) {
  const { row, selected, match } = props;
  const e = row.event;
  return (
    <div
      id={`event-${e.seq}`}
      data-seq={e.seq}
      data-type={e.type}
      aria-current={selected ? "true" : undefined}
      className={cn(
        "group flex gap-2 border-b border-zinc-100 py-1.5 pr-3 text-sm dark:border-zinc-800/70",
        selected && "bg-indigo-50 dark:bg-indigo-950/40",
        match === "match" && "bg-yellow-50 dark:bg-yellow-950/30",
        match === "current" && "bg-yellow-100 ring-2 ring-yellow-400 ring-inset dark:bg-yellow-900/40",
      )}
      style={{ paddingLeft: 8 + row.depth * 18 }}
    >
      <a href={`#event-${e.seq}`} className="w-12 shrink-0 pt-0.5 text-right font-mono text-[11px] text-zinc-500 hover:text-indigo-600 dark:text-zinc-400" aria-label={`Link to event ${e.seq}`}>
        {e.seq}
      </a>
      <div className={cn("min-w-0 flex-1", row.depth > 0 && "border-l-2 border-indigo-200 pl-2 dark:border-indigo-900")}>
        <EventBody {...props} />
      </div>
      <div className="flex shrink-0 items-start gap-0.5">
        <CopyButton value={() => eventLink(e.seq)} what={`link to event ${e.seq}`} className="size-5 opacity-0 group-hover:opacity-100 focus-visible:opacity-100" />
        <ClockTime date={e.at} className="pt-0.5 font-mono text-[11px] text-zinc-500 dark:text-zinc-400" />
      </div>
    </div>
  );
}, sameRow);

function Toggle({ expanded, onClick, children, label }: { expanded: boolean; onClick: () => void; children: React.ReactNode; label: string }) {
  return (
    <button type="button" aria-expanded={expanded} aria-label={label} onClick={onClick} className="flex w-full min-w-0 items-center gap-1.5 text-left hover:text-indigo-700 dark:hover:text-indigo-300">
      <span aria-hidden className="w-3 shrink-0 text-zinc-400">{expanded ? "▾" : "▸"}</span>
      {children}
    </button>
  );
}

/** This event's address: the page's URL with the event's anchor. */
const eventLink = (seq: number) => {
  const url = new URL(window.location.href);
  url.hash = `event-${seq}`;
  return url.href;
};

function RawPayload({ event }: { event: TEvent }) {
  return (
    <div className="relative mt-1">
      <pre className="max-h-96 overflow-auto rounded bg-zinc-100 p-2 pr-8 font-mono text-xs whitespace-pre-wrap break-all dark:bg-zinc-900">{jsonPreview(event.payload)}</pre>
      <CopyButton value={() => jsonPreview(event.payload, Number.POSITIVE_INFINITY)} what={`payload of event ${event.seq}`} className="absolute top-1 right-1" />
    </div>
  );
}

function EventBody({ row, runId, expanded, collapsed, query, onToggle, onToggleSubagent }: EventRowProps) {
  const e = row.event;
  const p = payloadOf(e.payload);
  const toggle = () => onToggle(e.seq);
  const summaryLine = (label: React.ReactNode, text: string, tone: "neutral" | "muted" | "info" | "warning" | "danger" | "success" | "progress" = "neutral") => (
    <>
      <Toggle expanded={expanded} onClick={toggle} label={`Details of event ${e.seq}`}>
        <Badge tone={tone}>{label}</Badge>
        <span className="min-w-0 truncate text-zinc-700 dark:text-zinc-300">
          <Hl text={text} query={query} />
        </span>
      </Toggle>
      {expanded && <RawPayload event={e} />}
    </>
  );

  switch (e.type) {
    case "message": {
      const role = s(p.role) || "assistant";
      return (
        <div>
          <Badge tone={role === "assistant" ? "progress" : role === "user" ? "info" : "muted"}>{role}</Badge>
          <SafeMarkdown text={raw(p.text)} />
        </div>
      );
    }
    case "tool_call": {
      const result = row.result;
      const rp = payloadOf(result?.payload);
      const failed = rp.isError === true;
      const duration = toolDuration(e, result);
      return (
        <div>
          <Toggle expanded={expanded} onClick={toggle} label={`Tool call ${s(p.name)}, ${result ? (failed ? "failed" : "succeeded") : "running"}`}>
            <Badge tone={!result ? "progress" : failed ? "danger" : "success"}>{!result ? "running" : failed ? "error" : "ok"}</Badge>
            <span className="font-mono text-xs font-semibold">{clip(s(p.name), 80)}</span>
            <span className="min-w-0 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">
              <Hl text={clip(inputSummary(p.input), 200)} query={query} />
            </span>
            {duration !== null && <span className="ml-auto shrink-0 text-xs text-zinc-500 dark:text-zinc-400">{formatDuration(duration)}</span>}
          </Toggle>
          {expanded && (
            <div className="mt-1 space-y-1">
              <div className="flex items-center gap-1 text-xs text-zinc-500">
                Input
                {typeof payloadOf(p.input).command === "string" && <CopyButton value={s(payloadOf(p.input).command)} what="command" className="size-5" />}
              </div>
              <TerminalText text={jsonPreview(p.input, 64_000)} maxLines={60} query={query} />
              {result ? (
                <>
                  <div className="text-xs text-zinc-500">
                    Output {failed && <span className="text-red-600 dark:text-red-400">(error)</span>} · <a href={`#event-${result.seq}`} className="underline">event {result.seq}</a>
                  </div>
                  <TerminalText text={raw(rp.output)} maxLines={60} query={query} />
                </>
              ) : (
                <div className="text-xs text-zinc-500">No result yet.</div>
              )}
            </div>
          )}
        </div>
      );
    }
    case "tool_result":
      return (
        <div>
          <Toggle expanded={expanded} onClick={toggle} label={`Tool result for ${s(p.toolCallId)}`}>
            <Badge tone={p.isError === true ? "danger" : "success"}>result</Badge>
            <span className="min-w-0 truncate font-mono text-xs text-zinc-500">call {clip(s(p.toolCallId), 60)} (its call is in an earlier page)</span>
          </Toggle>
          {expanded && <TerminalText className="mt-1" text={raw(p.output)} maxLines={60} query={query} />}
        </div>
      );
    case "subagent_started": {
      const done = row.completion;
      const cp = payloadOf(done?.payload);
      const id = s(p.id);
      return (
        <div>
          <Toggle expanded={!collapsed} onClick={() => onToggleSubagent(id)} label={`Subagent ${s(p.name)}, ${collapsed ? "collapsed" : "expanded"}`}>
            <Badge tone={!done ? "progress" : cp.isError === true ? "danger" : "info"}>subagent</Badge>
            <span className="font-medium">{clip(s(p.name), 100)}</span>
            <span className="text-xs text-zinc-500 dark:text-zinc-400">
              {!done ? "running" : cp.isError === true ? "failed" : "completed"} · {row.childCount ?? 0} events
              {done && ` · ${formatDuration(done.at - e.at)}`}
            </span>
          </Toggle>
          {(s(cp.summary) || s(p.summary)) && (
            <p className="mt-0.5 text-xs break-words text-zinc-600 dark:text-zinc-400">
              <Hl text={clip(s(cp.summary) || s(p.summary), 2_000)} query={query} />
            </p>
          )}
        </div>
      );
    }
    case "thinking":
      // Collapsed: the model's reasoning, one line until asked for.
      return (
        <div>
          <Toggle expanded={expanded} onClick={toggle} label={`Thinking, ${expanded ? "expanded" : "collapsed"}`}>
            <Badge tone="muted">thinking</Badge>
            {!expanded && <span className="min-w-0 truncate text-xs text-zinc-500 italic dark:text-zinc-400">{clip(raw(p.text), 160)}</span>}
          </Toggle>
          {expanded && <SafeMarkdown text={raw(p.text)} />}
        </div>
      );
    case "permission_denied":
      return summaryLine("denied", `${clip(s(p.toolName), 120)} ${clip(inputSummary(p.input), 200)} — not in the stack's tools`, "warning");
    case "subagent_completed":
      return summaryLine("subagent done", `${s(p.name)}${p.isError === true ? " (failed)" : ""}`, "info");
    case "log": {
      const text = raw(p.text);
      const badge = <Badge tone={s(p.stream) === "stderr" ? "danger" : "muted"}>{s(p.stream) || "log"}</Badge>;
      // A single short line stays on the row's line: logs are most of a transcript.
      if (!text.includes("\n") && text.length <= 400) {
        return (
          <div className="flex min-w-0 items-start gap-2">
            {badge}
            <span className="min-w-0 flex-1 rounded bg-zinc-950 px-1.5 font-mono text-xs leading-5 break-all whitespace-pre-wrap text-zinc-100">
              <TerminalLine line={text} query={query} />
            </span>
          </div>
        );
      }
      return (
        <div>
          {badge}
          <TerminalText className="mt-1" text={text} maxLines={30} query={query} />
        </div>
      );
    }
    case "artifact_produced":
      return (
        <div className="flex flex-wrap items-center gap-2">
          <Badge tone="success">artifact</Badge>
          <span className="font-mono text-xs">{clip(s(p.name), 200)}</span>
          <span className="text-xs text-zinc-500">
            {words(s(p.kind))} · {(n(p.sizeBytes) ?? 0).toLocaleString("en")} B · <span title={s(p.digest)}>{clip(s(p.digest), 19)}</span>
          </span>
          {s(p.artifactId) && (
            <Link href={`/runs/${runId}/artifacts/${encodeURIComponent(s(p.artifactId))}`} className="text-xs text-indigo-600 underline dark:text-indigo-400">
              Open
            </Link>
          )}
        </div>
      );
    case "approval_requested": {
      const t = payloadOf(p.target);
      const target = targetParts({ action: s(p.action), targetBranch: s(t.branch) || null, targetPrNumber: n(t.prNumber) ?? null, targetCheck: s(t.check) || null }).join(", ");
      return (
        <div>
          <div className="flex flex-wrap items-center gap-2">
            <Badge tone="warning">approval requested</Badge>
            <span className="font-medium">{words(s(p.action))}</span>
            {target && <span className="text-xs text-zinc-500">→ {target}</span>}
            <Link href="/approvals" className="text-xs text-indigo-600 underline dark:text-indigo-400">Approvals</Link>
          </div>
          <p className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400"><Hl text={clip(s(p.reason), 2_000)} query={query} /></p>
        </div>
      );
    }
    case "write_back_requested":
      return summaryLine("write-back requested", words(s(p.action)), "warning");
    case "write_back_completed":
      return summaryLine(`write-back ${s(p.outcome)}`, `${words(s(p.action))}${s(p.externalRef) ? ` · ${s(p.externalRef)}` : ""}${s(p.error) ? ` · ${s(p.error)}` : ""}`, s(p.outcome) === "failed" ? "danger" : "success");
    case "status": {
      const scope = s(p.scope) === "attempt" ? `Attempt ${n(p.attemptNumber) ?? ""}` : "Run";
      return summaryLine("status", `${scope}: ${p.from ? `${words(s(p.from))} → ` : ""}${words(s(p.to))}${s(p.reason) ? ` — ${s(p.reason)}` : ""}`, "info");
    }
    case "cost":
      return summaryLine(
        "cost",
        `${(n(p.inputTokens) ?? 0).toLocaleString("en")} in / ${(n(p.outputTokens) ?? 0).toLocaleString("en")} out tokens${n(p.usd) !== null ? ` · ${formatUsd(n(p.usd)!)}` : ""}${s(p.model) ? ` · ${s(p.model)}` : ""}`,
        "muted",
      );
    case "model_call": {
      const cached = (n(p.cacheReadTokens) ?? 0) + (n(p.cacheWriteTokens) ?? 0);
      return summaryLine(
        "model call",
        `${clip(s(p.model), 200)} · ${(n(p.inputTokens) ?? 0).toLocaleString("en")} in${cached > 0 ? ` (+${cached.toLocaleString("en")} cached)` : ""} / ${(n(p.outputTokens) ?? 0).toLocaleString("en")} out tokens · ${formatDuration(n(p.durationMs) ?? 0)}`,
        "muted",
      );
    }
    case "mcp_health": {
      // Written by the worker before launch (an agent cannot emit it): one MCP server's check.
      const name = clip(s(p.server), 80);
      if (p.ok === true) return summaryLine("mcp", `${name} answered: ${n(p.toolCount) ?? 0} tools, in ${formatDuration(n(p.durationMs) ?? 0)}`, "muted");
      const what = s(p.outcome) === "refused_launch" ? "required, so the launch is refused" : "optional, so it is left out of the agent's MCP config";
      return summaryLine("mcp", `${name} failed its health check (${clip(s(p.reason), 300)}): ${what}`, s(p.outcome) === "refused_launch" ? "danger" : "warning");
    }
    case "heartbeat":
      return <span className="text-xs text-zinc-400">heartbeat</span>;
    case "queue":
      return summaryLine("queue", `Attempt ${n(p.attemptNumber) ?? "?"} ${s(p.phase)}${s(p.poolName) ? ` on ${s(p.poolName)}` : ""}${n(p.waitMs) !== null ? ` after ${formatDuration(n(p.waitMs))}` : ""}`, "muted");
    case "admission":
      return summaryLine(p.admitted === true ? "admitted" : "refused", s(p.summary), p.admitted === true ? "success" : "danger");
    case "sandbox": {
      // Written by the worker (an agent cannot emit it): what contains the agent, what it refused.
      if (s(p.phase) === "blocked") return summaryLine("blocked", `${clip(s(p.host), 300)}:${n(p.port) ?? "?"} — ${clip(s(p.reason), 300)}`, "danger");
      if (s(p.phase) === "metered") {
        const models = Array.isArray(p.models) ? (p.models as Record<string, unknown>[]) : [];
        const sum = (keys: string[]) => models.reduce((t, m) => t + keys.reduce((u, k) => u + (typeof m[k] === "number" ? (m[k] as number) : 0), 0), 0);
        return summaryLine(
          "metered",
          `Model API: ${n(p.calls) ?? 0} calls through Airlock's gateway, ${sum(["inputTokens", "cacheReadTokens", "cacheWriteTokens"]).toLocaleString("en")} tokens in, ${sum(["outputTokens"]).toLocaleString("en")} out (the model API's own figures)`,
          "muted",
        );
      }
      if (s(p.phase) === "ended") {
        return s(p.reason)
          ? summaryLine("sandbox", clip(s(p.reason), 500), "danger")
          : summaryLine("sandbox", `ended: peak ${n(p.peakMemoryMb) ?? 0} MiB, ${n(p.peakProcesses) ?? 0} processes, ${n(p.cpuSeconds) ?? 0} s CPU, ${n(p.blockedConnections) ?? 0} blocked`, "muted");
      }
      const net = (p.network && typeof p.network === "object" ? p.network : {}) as { mode?: unknown; allowedHosts?: unknown };
      const hosts = Array.isArray(net.allowedHosts) ? net.allowedHosts.filter((h): h is string => typeof h === "string") : [];
      return s(p.kind) === "none"
        ? summaryLine("no sandbox", clip(s(p.unsandboxedReason), 500), "danger")
        : summaryLine("sandbox", `${s(p.kind)}, network ${s(net.mode)}${hosts.length > 0 ? ` (${clip(hosts.join(", "), 500)})` : ""}`, "info");
    }
    case "trigger_matched":
      return summaryLine("trigger", `Rule ${s(p.ruleName)} matched (${words(s(p.triggerKind))})`, "muted");
    case "dispatch_skipped":
      return summaryLine("skipped", s(p.reason), "muted");
    case "context_assembled":
      return summaryLine("context", `${(n(p.sizeBytes) ?? 0).toLocaleString("en")} B, ${n(p.redactions) ?? 0} redactions${p.truncated === true ? ", truncated" : ""}`, "muted");
    case "context_attached": {
      // Redacted by the server; still untrusted text: Markdown for notes, terminal text for excerpts.
      const kind = s(p.kind);
      const href = safeUrl(s(p.url));
      const where = s(p.path) ? `${s(p.path)}${n(p.startLine) !== null ? `:${n(p.startLine)}` : ""}` : "";
      return (
        <div>
          <div className="flex flex-wrap items-center gap-2">
            <Badge tone="info">context attached</Badge>
            <span className="font-medium">{clip(s(p.title), 200) || words(kind)}</span>
            <span className="text-xs text-zinc-500">by {clip(s(p.attachedBy), 320)}</span>
            {n(p.redactions) ? <Badge tone="warning">{n(p.redactions)} redacted</Badge> : null}
          </div>
          {href && (
            <a href={href} target="_blank" rel="noopener noreferrer nofollow ugc" className="break-all text-xs text-indigo-600 underline dark:text-indigo-400">
              {clip(href, 500)}
            </a>
          )}
          {where && <div className="font-mono text-xs text-zinc-500">{where}</div>}
          {kind === "file_excerpt" ? <TerminalText text={raw(p.text)} /> : raw(p.text) && <SafeMarkdown text={raw(p.text)} />}
        </div>
      );
    }
    default:
      return summaryLine(clip(e.type, 40), clip(jsonPreview(e.payload, 300).replace(/\s+/g, " "), 200), "muted");
  }
}
