"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { PolicyKind } from "@/server/db/generated/enums";
import { useTRPC } from "@/components/providers/trpc";
import { VersionChanges, VersionList } from "@/components/forms/version-list";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { SkeletonLines } from "@/components/ui/skeleton";
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
      {versions.error && <Alert>{versions.error.message}</Alert>}
      <VersionList
        items={(versions.data ?? []).map((v) => ({
          version: v.version,
          by: v.createdBy ? v.createdBy.email : "shipped with Airlock",
          createdAt: v.createdAt,
          digest: v.digest,
          detail: `${v.ruleCount} rules`,
          testId: `version-${v.version}`,
        }))}
        selected={selected}
        onPick={setPicked}
      />
      {selected !== null && selected > 1 && (
        <VersionChanges version={selected}>
          {diff.isPending ? <SkeletonLines lines={3} /> : diff.data ? <DiffView diff={diff.data} /> : null}
          {diff.error && <Alert>{diff.error.message}</Alert>}
        </VersionChanges>
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
