"use client";

import { toJsxRuntime, type Components } from "hast-util-to-jsx-runtime";
import { common, createLowlight } from "lowlight";
import { memo, useMemo, useState } from "react";
import { Fragment, jsx, jsxs } from "react/jsx-runtime";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { parsePatch, type DiffFile, type DiffLine } from "./diff";
import { plainTerminalText } from "./ansi";

// A patch artifact as a diff: files, hunks, old/new line numbers, syntax
// colours. lowlight returns a syntax tree (hast) whose leaves are text; it is
// turned into React elements, so code is never parsed as HTML.

const lowlight = createLowlight(common);

// highlight.js classes -> static Tailwind classes (no stylesheet of our own needed).
const tokenClass: Record<string, string> = {
  "hljs-keyword": "text-purple-700 dark:text-purple-300",
  "hljs-built_in": "text-amber-700 dark:text-amber-300",
  "hljs-type": "text-amber-700 dark:text-amber-300",
  "hljs-literal": "text-orange-700 dark:text-orange-300",
  "hljs-number": "text-orange-700 dark:text-orange-300",
  "hljs-string": "text-green-700 dark:text-green-300",
  "hljs-regexp": "text-red-700 dark:text-red-300",
  "hljs-comment": "italic text-zinc-500",
  "hljs-meta": "text-zinc-500",
  "hljs-title": "text-blue-700 dark:text-blue-300",
  "hljs-params": "text-rose-700 dark:text-rose-300",
  "hljs-variable": "text-rose-700 dark:text-rose-300",
  "hljs-attr": "text-sky-700 dark:text-sky-300",
  "hljs-attribute": "text-sky-700 dark:text-sky-300",
  "hljs-property": "text-sky-700 dark:text-sky-300",
  "hljs-tag": "text-blue-700 dark:text-blue-300",
  "hljs-name": "text-blue-700 dark:text-blue-300",
  "hljs-section": "font-semibold text-blue-700 dark:text-blue-300",
  "hljs-selector-class": "text-purple-700 dark:text-purple-300",
  "hljs-symbol": "text-orange-700 dark:text-orange-300",
};

const components: Partial<Components> = {
  // Only spans come out of lowlight; anything else is rendered as its text.
  span: ({ className, children }: { className?: string; children?: React.ReactNode }) => (
    <span className={cn(...(className ?? "").split(" ").map((c) => tokenClass[c]))}>{children}</span>
  ),
};

const maxHighlightChars = 1_000;

function highlighted(text: string, language: string | null): React.ReactNode {
  if (!language || text.length > maxHighlightChars || !lowlight.registered(language)) return text;
  try {
    return toJsxRuntime(lowlight.highlight(language, text), { Fragment, jsx, jsxs, components });
  } catch {
    return text;
  }
}

const lineTone: Record<DiffLine["kind"], string> = {
  add: "bg-green-50 dark:bg-green-950/40",
  del: "bg-red-50 dark:bg-red-950/40",
  context: "",
};
const sign: Record<DiffLine["kind"], string> = { add: "+", del: "-", context: " " };

/** The hunks holding the first `max` lines (a huge file renders on request only). */
function firstLines(hunks: DiffFile["hunks"], max: number): DiffFile["hunks"] {
  const out: DiffFile["hunks"] = [];
  let left = max;
  for (const h of hunks) {
    if (left <= 0) break;
    out.push(h.lines.length <= left ? h : { ...h, lines: h.lines.slice(0, left) });
    left -= h.lines.length;
  }
  return out;
}

const FileView = memo(function FileView({ file, index }: { file: DiffFile; index: number }) {
  const total = file.hunks.reduce((n, h) => n + h.lines.length, 0);
  const [all, setAll] = useState(total <= 2_000);
  const hunks = useMemo(() => (all ? file.hunks : firstLines(file.hunks, 2_000)), [all, file.hunks]);
  return (
    <Card as="section" padding="none" id={`file-${index}`} aria-label={file.path} className="overflow-hidden">
      <header className="flex flex-wrap items-center gap-2 border-b border-zinc-200 bg-zinc-50 px-3 py-2 text-sm dark:border-zinc-800 dark:bg-zinc-900">
        <span className="font-mono font-medium break-all">{file.oldPath ? `${file.oldPath} → ${file.path}` : file.path}</span>
        <Badge tone={file.status === "added" ? "success" : file.status === "deleted" ? "danger" : "neutral"}>{file.status}</Badge>
        <span className="ml-auto font-mono text-xs">
          <span className="text-green-700 dark:text-green-400">+{file.additions}</span> <span className="text-red-700 dark:text-red-400">-{file.deletions}</span>
        </span>
      </header>
      <div className="overflow-x-auto">
        <table className="w-full border-collapse font-mono text-xs leading-5">
          <tbody>
            {hunks.map((hunk, h) => {
              const lines = hunk.lines;
              return (
                <Fragment key={h}>
                  <tr className="bg-sky-50 text-sky-800 dark:bg-sky-950/40 dark:text-sky-300">
                    <td colSpan={4} className="px-3 py-0.5">{plainTerminalText(hunk.header)}</td>
                  </tr>
                  {lines.map((line, i) => (
                    <tr key={i} className={lineTone[line.kind]}>
                      <td className="w-12 border-r border-zinc-200 pr-2 text-right text-zinc-500 select-none dark:border-zinc-800">{line.oldLine ?? ""}</td>
                      <td className="w-12 border-r border-zinc-200 pr-2 text-right text-zinc-500 select-none dark:border-zinc-800">{line.newLine ?? ""}</td>
                      <td className="w-4 pl-1 text-zinc-500 select-none" aria-label={line.kind === "add" ? "added" : line.kind === "del" ? "removed" : undefined}>
                        {sign[line.kind]}
                      </td>
                      <td className="pr-3 break-all whitespace-pre-wrap">{highlighted(plainTerminalText(line.text), file.language)}</td>
                    </tr>
                  ))}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      {!all && (
        <button type="button" onClick={() => setAll(true)} className="m-2 rounded border border-zinc-300 px-2 py-0.5 text-xs dark:border-zinc-700">
          Show all {total.toLocaleString("en")} lines
        </button>
      )}
    </Card>
  );
});

export function DiffView({ patch }: { patch: string }) {
  const files = useMemo(() => parsePatch(patch), [patch]);
  if (files.length === 0) return <EmptyState size="inline">This artifact is not a unified diff.</EmptyState>;
  const additions = files.reduce((n, f) => n + f.additions, 0);
  const deletions = files.reduce((n, f) => n + f.deletions, 0);
  return (
    <div className="space-y-4">
      <Card as="nav" padding="sm" aria-label="Changed files" className="text-sm">
        <p className="mb-1 text-zinc-600 dark:text-zinc-400">
          {files.length} {files.length === 1 ? "file" : "files"} changed, <span className="text-green-700 dark:text-green-400">{additions} additions</span>,{" "}
          <span className="text-red-700 dark:text-red-400">{deletions} deletions</span>
        </p>
        <ul className="space-y-0.5 font-mono text-xs">
          {files.map((f, i) => (
            <li key={i}>
              <a href={`#file-${i}`} className="hover:underline">{f.path}</a>
            </li>
          ))}
        </ul>
      </Card>
      {files.map((f, i) => (
        <FileView key={i} file={f} index={i} />
      ))}
    </div>
  );
}
