"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { PolicyKind } from "@/server/db/generated/enums";
import { useTRPC } from "@/components/providers/trpc";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { formatRelative } from "@/components/ui/format";
import type { PolicyDiff } from "./types";

// Every saved version, newest first; selecting one shows what it changed from the one before.

export function VersionHistory({ kind }: { kind: PolicyKind }) {
  const trpc = useTRPC();
  const versions = useQuery(trpc.policies.versions.queryOptions({ kind }));
  const [picked, setPicked] = useState<number | null>(null);
  const newest = versions.data?.[0]?.version ?? 1;
  const selected = picked ?? (newest > 1 ? newest : null);
  const diff = useQuery({
    ...trpc.policies.diff.queryOptions({ kind, from: (selected ?? 2) - 1, to: selected ?? 2 }),
    enabled: selected !== null && selected > 1,
  });

  return (
    <section aria-label="Version history" className="space-y-3">
      <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase">Version history</h2>
      {versions.error && <p role="alert" className="text-sm text-red-600">{versions.error.message}</p>}
      <ol className="divide-y divide-zinc-100 rounded-lg border border-zinc-200 bg-white dark:divide-zinc-800 dark:border-zinc-800 dark:bg-zinc-900">
        {versions.data?.map((v) => (
          <li key={v.id} data-testid={`version-${v.version}`} className={cn("flex flex-wrap items-center gap-3 px-3 py-2 text-sm", selected === v.version && "bg-indigo-50/60 dark:bg-indigo-950/40")}>
            <span className="font-mono font-semibold">v{v.version}</span>
            <span className="text-zinc-600 dark:text-zinc-400">{v.createdBy ? v.createdBy.email : "shipped with Airlock"}</span>
            <span className="text-xs text-zinc-500" title={v.createdAt.toISOString()}>
              {formatRelative(v.createdAt)}
            </span>
            <span className="text-xs text-zinc-500">{v.ruleCount} rules</span>
            <span className="font-mono text-xs text-zinc-400" title={v.digest}>
              {v.digest.slice(7, 19)}
            </span>
            {v.version > 1 && (
              <Button type="button" size="sm" variant="ghost" className="ml-auto" aria-pressed={selected === v.version} onClick={() => setPicked(v.version)}>
                Changes from v{v.version - 1}
              </Button>
            )}
          </li>
        ))}
      </ol>
      {selected !== null && selected > 1 && (
        <div aria-label={`Changes in v${selected}`} role="region" className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900">
          <h3 className="mb-2 text-sm font-semibold">
            Changes from v{selected - 1} to v{selected}
          </h3>
          {diff.isPending ? <p className="text-sm text-zinc-500">Loading…</p> : diff.data ? <DiffView diff={diff.data} /> : null}
          {diff.error && <p role="alert" className="text-sm text-red-600">{diff.error.message}</p>}
        </div>
      )}
    </section>
  );
}

function Change({ field, before, after }: { field: string; before: string; after: string }) {
  return (
    <div className="grid grid-cols-[6rem_1fr] gap-x-2 text-xs">
      <span className="text-zinc-500">{field}</span>
      <div className="space-y-0.5 font-mono">
        <div className="rounded bg-red-50 px-1 text-red-800 line-through decoration-red-400/60 dark:bg-red-950 dark:text-red-300">{before || "(empty)"}</div>
        <div className="rounded bg-emerald-50 px-1 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300">{after || "(empty)"}</div>
      </div>
    </div>
  );
}

export function DiffView({ diff }: { diff: PolicyDiff }) {
  if (!diff.changed) return <p className="text-sm text-zinc-500">No changes.</p>;
  const { rules, properties, defaults, meta } = diff;
  return (
    <div className="space-y-3 text-sm" data-testid="policy-diff">
      {rules.added.map((r) => (
        <div key={`+${r.name}`}>
          <Badge tone="success">added</Badge> <span className="font-mono text-xs">{r.name}</span>
          <div className="mt-0.5 font-mono text-xs text-zinc-600 dark:text-zinc-400">{r.summary}</div>
        </div>
      ))}
      {rules.removed.map((r) => (
        <div key={`-${r.name}`}>
          <Badge tone="danger">removed</Badge> <span className="font-mono text-xs">{r.name}</span>
          <div className="mt-0.5 font-mono text-xs text-zinc-600 line-through dark:text-zinc-400">{r.summary}</div>
        </div>
      ))}
      {rules.changed.map((r) => (
        <div key={`~${r.name}`} className="space-y-1">
          <div>
            <Badge tone="warning">changed</Badge> <span className="font-mono text-xs">{r.name}</span>
          </div>
          {r.changes.map((c) => (
            <Change key={c.field} {...c} />
          ))}
        </div>
      ))}
      {rules.reordered && <p className="text-xs text-zinc-600">Rules were reordered (order breaks ties between equal priorities).</p>}
      {defaults.map((d) => (
        <div key={`d-${d.property}`} className="space-y-1">
          <div>
            <Badge tone="warning">default</Badge> <span className="font-mono text-xs">{d.property}</span>
          </div>
          {d.changes.map((c) => (
            <Change key={c.field} {...c} />
          ))}
        </div>
      ))}
      {(properties.added.length > 0 || properties.removed.length > 0) && (
        <p className="text-xs">
          Properties {properties.added.length > 0 && `added: ${properties.added.join(", ")}`} {properties.removed.length > 0 && `removed: ${properties.removed.join(", ")}`}
        </p>
      )}
      {properties.changed.map((p) => (
        <Change key={`p-${p.name}`} field={p.name} before={p.before} after={p.after} />
      ))}
      {meta.map((c) => (
        <Change key={`m-${c.field}`} {...c} />
      ))}
    </div>
  );
}
