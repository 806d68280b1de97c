"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeList, LineDiffView } from "@/components/forms/change-list";
import { useTRPC } from "@/components/providers/trpc";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { formatRelative } from "@/components/ui/format";

// Every saved version of a stack, newest first; picking one shows its structural diff from the
// version before (fields, set items added and removed, the prompt template line by line).

type Version = { version: number; digest: string; createdAt: Date; createdBy: string | null };

export function StackVersions({ stackId, versions }: { stackId: string; versions: readonly Version[] }) {
  const trpc = useTRPC();
  const newest = versions[0]?.version ?? 1;
  const [picked, setPicked] = useState<number | null>(null);
  const selected = picked ?? (newest > 1 ? newest : null);
  const diff = useQuery({ ...trpc.stacks.diff.queryOptions({ stackId, from: Math.max(1, (selected ?? 2) - 1), to: selected ?? 2 }), enabled: selected !== null && selected > 1 });
  return (
    <section aria-label="Versions" className="space-y-3">
      <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Versions</h2>
      <ol className="divide-y divide-zinc-100 rounded-lg border border-zinc-200 bg-white dark:divide-zinc-800 dark:border-zinc-800 dark:bg-zinc-900">
        {versions.map((v) => (
          <li key={v.version} data-testid={`stack-version-${v.version}`} className={cn("flex flex-wrap items-center gap-3 px-3 py-2 text-sm", selected === v.version && "bg-indigo-50/60 dark:bg-indigo-950/40")}>
            <span className="font-mono font-semibold">v{v.version}</span>
            <span className="text-zinc-600 dark:text-zinc-400">{v.createdBy ?? "seeded"}</span>
            <span className="text-xs text-zinc-500" title={v.createdAt.toISOString()}>{formatRelative(v.createdAt)}</span>
            <span className="font-mono text-xs text-zinc-500" title={v.digest}>{v.digest.slice(7, 19)}</span>
            {v.version > 1 && (
              <Button type="button" size="sm" variant="ghost" className="ml-auto" aria-pressed={selected === v.version} onClick={() => setPicked(v.version)}>
                Changes from v{v.version - 1}
              </Button>
            )}
          </li>
        ))}
      </ol>
      {selected !== null && selected > 1 && (
        <div role="region" aria-label={`Changes in v${selected}`} className="space-y-2 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900">
          <h3 className="text-sm font-semibold">Changes from v{selected - 1} to v{selected}</h3>
          {diff.error && <p role="alert" className="text-sm text-red-600">{diff.error.message}</p>}
          {diff.data && (
            <>
              <ChangeList changes={diff.data.changes.filter((c) => c.path !== "promptTemplate")} empty={diff.data.promptTemplate ? "Only the prompt template changed." : "No differences in the spec (name or description only)."} />
              {diff.data.promptTemplate && <LineDiffView lines={diff.data.promptTemplate} label={`Prompt template changes in v${selected}`} />}
            </>
          )}
        </div>
      )}
    </section>
  );
}
