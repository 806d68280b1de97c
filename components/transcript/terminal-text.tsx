"use client";

import { memo, useMemo, useState } from "react";
import { cn } from "@/components/ui/cn";
import { ansiToSpans, truncateSpans, type AnsiColor, type AnsiSpan } from "./ansi";
import { splitHighlights } from "./search";

// Terminal output (logs, tool results) as React text nodes with colour
// classes: no HTML string is ever built. Long lines are cut with "show all";
// long outputs show their first lines with "show N more lines".

export const defaultMaxLineChars = 2_000;

// Static class names (Tailwind sees them here) for the 16 named colours, tuned for a dark background.
const fgClass: Record<string, string> = {
  black: "text-zinc-500",
  red: "text-red-400",
  green: "text-green-400",
  yellow: "text-yellow-300",
  blue: "text-blue-400",
  magenta: "text-fuchsia-400",
  cyan: "text-cyan-300",
  white: "text-zinc-200",
  "bright-black": "text-zinc-400",
  "bright-red": "text-red-300",
  "bright-green": "text-green-300",
  "bright-yellow": "text-yellow-200",
  "bright-blue": "text-blue-300",
  "bright-magenta": "text-fuchsia-300",
  "bright-cyan": "text-cyan-200",
  "bright-white": "text-white",
};
const bgClass: Record<string, string> = {
  black: "bg-black",
  red: "bg-red-900",
  green: "bg-green-900",
  yellow: "bg-yellow-900",
  blue: "bg-blue-900",
  magenta: "bg-fuchsia-900",
  cyan: "bg-cyan-900",
  white: "bg-zinc-300 text-zinc-900",
  "bright-black": "bg-zinc-700",
  "bright-red": "bg-red-700",
  "bright-green": "bg-green-700",
  "bright-yellow": "bg-yellow-700",
  "bright-blue": "bg-blue-700",
  "bright-magenta": "bg-fuchsia-700",
  "bright-cyan": "bg-cyan-700",
  "bright-white": "bg-white text-zinc-900",
};

// Only numbers reach a style value, never text from the input.
const rgb = (c: AnsiColor) => (c.kind === "rgb" ? `rgb(${c.r}, ${c.g}, ${c.b})` : undefined);

function SpanView({ span, query }: { span: AnsiSpan; query?: string }) {
  const className = cn(
    span.fg?.kind === "named" && fgClass[span.fg.name],
    span.bg?.kind === "named" && bgClass[span.bg.name],
    span.bold && "font-bold",
    span.dim && "opacity-70",
    span.italic && "italic",
    span.underline && "underline",
    span.strike && "line-through",
  );
  const style = span.fg?.kind === "rgb" || span.bg?.kind === "rgb" ? { color: span.fg ? rgb(span.fg) : undefined, backgroundColor: span.bg ? rgb(span.bg) : undefined } : undefined;
  const content = query ? splitHighlights(span.text, query).map((h, i) => (h.match ? <mark key={i} className="rounded-sm bg-yellow-300 text-zinc-900">{h.text}</mark> : h.text)) : span.text;
  if (!className && !style) return <>{content}</>;
  return (
    <span className={className || undefined} style={style}>
      {content}
    </span>
  );
}

/** One line of terminal output: coloured, cut at `maxChars` with a "show all" toggle. */
export const TerminalLine = memo(function TerminalLine({ line, maxChars = defaultMaxLineChars, query }: { line: string; maxChars?: number; query?: string }) {
  const [all, setAll] = useState(false);
  const { spans, hidden } = useMemo(() => {
    if (all) return { spans: ansiToSpans(line), hidden: 0 };
    // Escape sequences are few per visible character; parse only a bounded prefix of a huge line.
    const prefix = line.length > maxChars * 4 + 256 ? line.slice(0, maxChars * 4 + 256) : line;
    const cut = truncateSpans(ansiToSpans(prefix), maxChars);
    return { spans: cut.spans, hidden: cut.hidden + (line.length - prefix.length) };
  }, [line, maxChars, all]);
  return (
    <>
      {spans.map((s, i) => (
        <SpanView key={i} span={s} query={query} />
      ))}
      {hidden > 0 && (
        <button
          type="button"
          onClick={() => setAll(true)}
          className="ml-1 rounded bg-zinc-700 px-1 text-[11px] text-zinc-100 hover:bg-zinc-600"
        >
          … show all ({hidden.toLocaleString("en")} more characters)
        </button>
      )}
    </>
  );
});

export const splitLines = (text: string) => text.split(/\r?\n/);

/**
 * Multi-line terminal output in a dark block. With `startLine`, lines are
 * numbered and each is a deep-link target (`#<anchorPrefix><n>`).
 */
export function TerminalText(props: {
  text: string;
  startLine?: number;
  anchorPrefix?: string;
  maxLines?: number;
  maxLineChars?: number;
  query?: string;
  className?: string;
  label?: string;
}) {
  const lines = useMemo(() => splitLines(props.text), [props.text]);
  const [showAll, setShowAll] = useState(false);
  const limit = props.maxLines ?? Number.POSITIVE_INFINITY;
  const shown = showAll || lines.length <= limit ? lines : lines.slice(0, limit);
  const numbered = props.startLine !== undefined;
  return (
    <div
      role={props.label ? "region" : undefined}
      aria-label={props.label}
      className={cn("overflow-x-auto rounded-md bg-zinc-950 py-1.5 font-mono text-xs leading-5 text-zinc-100", props.className)}
    >
      {shown.map((line, i) => {
        const n = (props.startLine ?? 1) + i;
        const anchor = numbered && props.anchorPrefix !== undefined ? `${props.anchorPrefix}${n}` : undefined;
        return (
          <div key={i} id={anchor} className={cn("flex scroll-mt-16", numbered && "target:bg-yellow-500/25")}>
            {numbered && (
              <a
                href={anchor ? `#${anchor}` : undefined}
                aria-label={`Line ${n}`}
                className="w-12 shrink-0 pr-3 text-right text-zinc-500 select-none hover:text-zinc-300"
              >
                {n}
              </a>
            )}
            <span className="min-w-0 flex-1 px-2 break-all whitespace-pre-wrap">
              <TerminalLine line={line} maxChars={props.maxLineChars} query={props.query} />
            </span>
          </div>
        );
      })}
      {shown.length < lines.length && (
        <button type="button" onClick={() => setShowAll(true)} className="mx-2 my-1 rounded bg-zinc-800 px-2 py-0.5 text-[11px] text-zinc-200 hover:bg-zinc-700">
          Show {(lines.length - shown.length).toLocaleString("en")} more lines
        </button>
      )}
    </div>
  );
}
