"use client";

import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import { plainTerminalText } from "./ansi";
import { safeUrl } from "./safe-url";

// Markdown from agents: raw HTML in it is shown as text (react-markdown never
// parses it), the tree is sanitised (GitHub's schema), links go to http(s)
// only and open without a referrer, and images are not loaded (a remote image
// is an exfiltration channel: it becomes a link to the image). GitHub-flavoured
// syntax (tables, strikethrough, task lists, autolinks) is parsed, because
// agents write it; wide tables scroll inside the transcript.

const components: Components = {
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow ugc" className="text-indigo-600 underline dark:text-indigo-400">
        {children}
      </a>
    ) : (
      <span>{children}</span>
    ),
  img: ({ src, alt }) => {
    const href = typeof src === "string" ? safeUrl(src) : "";
    const label = `image: ${alt || "untitled"}`;
    return href ? (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow ugc" className="text-indigo-600 underline dark:text-indigo-400">
        [{label}]
      </a>
    ) : (
      <span>[{label}]</span>
    );
  },
  pre: ({ children }) => <pre className="my-2 overflow-x-auto rounded-md bg-zinc-950 p-2 font-mono text-xs text-zinc-100">{children}</pre>,
  code: ({ children, className }) => <code className={className ? "font-mono" : "rounded bg-zinc-100 px-1 font-mono text-[0.85em] dark:bg-zinc-800"}>{children}</code>,
  h1: ({ children }) => <p className="mt-2 font-semibold">{children}</p>,
  h2: ({ children }) => <p className="mt-2 font-semibold">{children}</p>,
  h3: ({ children }) => <p className="mt-2 font-semibold">{children}</p>,
  ul: ({ children }) => <ul className="my-1 list-disc pl-5">{children}</ul>,
  ol: ({ children }) => <ol className="my-1 list-decimal pl-5">{children}</ol>,
  p: ({ children }) => <p className="my-1 break-words">{children}</p>,
  table: ({ children }) => (
    <div className="my-2 max-w-full overflow-x-auto">
      <table className="border-collapse text-xs">{children}</table>
    </div>
  ),
  th: ({ children, style }) => <th style={style} className="border border-zinc-300 bg-zinc-50 px-2 py-1 text-left font-semibold dark:border-zinc-700 dark:bg-zinc-800">{children}</th>,
  td: ({ children, style }) => <td style={style} className="border border-zinc-300 px-2 py-1 align-top dark:border-zinc-700">{children}</td>,
  blockquote: ({ children }) => <blockquote className="my-1 border-l-2 border-zinc-300 pl-2 text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">{children}</blockquote>,
};

export const SafeMarkdown = memo(function SafeMarkdown({ text }: { text: string }) {
  return (
    <div className="text-sm leading-6">
      <ReactMarkdown skipHtml remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeSanitize]} urlTransform={safeUrl} components={components}>
        {plainTerminalText(text)}
      </ReactMarkdown>
    </div>
  );
});
