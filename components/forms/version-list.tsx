"use client";

import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { RelativeTime } from "@/components/ui/time";

// The saved versions of a configuration (a policy, a stack), newest first; picking one shows
// what it changed from the version before, in the panel under the list.

export type VersionItem = { version: number; by: string; createdAt: Date; digest: string; detail?: string; testId: string };

export function VersionList({ items, selected, onPick }: { items: readonly VersionItem[]; selected: number | null; onPick: (version: number) => void }) {
  return (
    <Card as="ol" padding="none" className="divide-y divide-zinc-100 dark:divide-zinc-800">
      {items.map((v) => (
        <li key={v.version} data-testid={v.testId} className={cn("flex flex-wrap items-center gap-3 px-3 py-2 text-sm", selected === v.version && "bg-indigo-50/60 dark:bg-indigo-950/40")}>
          <span className="font-mono font-semibold">v{v.version}</span>
          <span className="text-zinc-600 dark:text-zinc-400">{v.by}</span>
          <RelativeTime date={v.createdAt} className="text-xs text-zinc-500" />
          {v.detail && <span className="text-xs text-zinc-500">{v.detail}</span>}
          <span className="font-mono text-xs text-zinc-500" title={v.digest}>
            {v.digest.slice(7, 19)}
          </span>
          {v.version > 1 && (
            <Button type="button" size="sm" variant="ghost" className="ml-auto" aria-pressed={selected === v.version} onClick={() => onPick(v.version)}>
              Changes from v{v.version - 1}
            </Button>
          )}
        </li>
      ))}
    </Card>
  );
}

export function VersionChanges({ version, children }: { version: number; children: React.ReactNode }) {
  return (
    <Card role="region" aria-label={`Changes in v${version}`} padding="sm" className="space-y-2">
      <h3 className="text-sm font-semibold">
        Changes from v{version - 1} to v{version}
      </h3>
      {children}
    </Card>
  );
}
