"use client";

import { Check, Copy } from "lucide-react";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { cn } from "./cn";

// Copies a value (a SHA, a command, an event's payload, a link) and says so. `value` may be a
// function, for what is only known at click time (a deep link built from the current URL).

/** The Clipboard API where the page is a secure context; a hidden textarea elsewhere (plain http on a LAN). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error("the browser refused to copy");
}

export function CopyButton({ value, what, className }: { value: string | (() => string); what: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 1_500);
    return () => clearTimeout(t);
  }, [copied]);
  return (
    <button
      type="button"
      aria-label={`Copy ${what}`}
      title={`Copy ${what}`}
      onClick={async (e) => {
        e.stopPropagation();
        try {
          await copyText(typeof value === "function" ? value() : value);
          setCopied(true);
          toast.success(`Copied ${what}`);
        } catch (err) {
          toast.error(`Could not copy ${what}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }}
      className={cn(
        "inline-flex size-6 shrink-0 items-center justify-center rounded text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-100",
        className,
      )}
    >
      {copied ? <Check aria-hidden className="size-3.5 text-emerald-600 dark:text-emerald-400" /> : <Copy aria-hidden className="size-3.5" />}
    </button>
  );
}
